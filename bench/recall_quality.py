"""Recall quality on LoCoMo and MADial-zh: each tier alone, fused, and BM25.

    python bench/recall_quality.py --locomo ../shared/data/locomo/locomo-dev.json \
        --madial-memory ../shared/data/madial-zh/memory.jsonl \
        --madial-dialogues ../shared/data/madial-zh/dialogue-dev.jsonl [--neo4j-uri bolt://...]

Metric conventions: ../shared/data/README.md. Every corpus goes through the
real pipeline: written as an episode JSONL file, ingested into a fresh state
directory (SQLite, Neo4j when a server is given or can be started, the raw
file registry), then queried through ``Memory.recall``. The BM25 baseline is
rank_bm25's Okapi over the same units (lowercase words for LoCoMo, CJK bigrams
for MADial), as in the data README's measured anchors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from rank_bm25 import BM25Okapi  # noqa: E402

from core.config import Settings  # noqa: E402
from core.ingest.pipeline import ingest  # noqa: E402
from core.recall import Memory  # noqa: E402

SYSTEMS = ["bm25", "neo4j", "sqlite", "files", "fused", "fused3"]
TIERS_OF = {"neo4j": "neo4j", "sqlite": "sqlite", "files": "files", "fused": None, "fused3": "neo4j,sqlite,files"}


# -- data ----------------------------------------------------------------------
def _norm_ids(ev) -> list[str]:
    """'D8:6; D9:17' -> ['D8:6', 'D9:17']; 'D:11:26' -> 'D11:26'; 'D30:05' -> 'D30:5'."""
    out = []
    for part in re.split(r"[;,\s]+", str(ev)):
        m = re.match(r"D:?(\d+):0*(\d+)$", part.strip())
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def locomo_tasks(path: Path):
    """Per conversation: units [(id, text, speaker, session date)] and questions [(q, gold ids)]."""
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        units = []
        for key in sorted((k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
            date = c.get(f"{key}_date_time", "")
            for turn in c[key]:
                text = f'({date}) {turn["speaker"]} said, "{turn["text"]}"'
                if turn.get("blip_caption"):
                    text += f' [shares {turn["blip_caption"]}]'
                units.append((turn["dia_id"], text, turn["speaker"], date))
        qs = []
        for qa in conv["qa"]:
            gold = sorted({i for ev in qa.get("evidence", []) for i in _norm_ids(ev)})
            if gold:
                qs.append((qa["question"], gold))
        yield conv["sample_id"], units, qs


def madial_tasks(mem_path: Path, dia_path: Path):
    memories: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for line in mem_path.read_text().splitlines():
        for mid, m in json.loads(line).items():
            memories[int(m["user-id"])].append((str(m["id"]), m["event"], m["time"]))
    per_user: dict[int, list] = defaultdict(list)
    for line in dia_path.read_text().splitlines():
        d = json.loads(line)
        turn = d["test-turn"][0] if isinstance(d["test-turn"], list) else d["test-turn"]
        lines = [l.strip() for l in d["dialogue"][:turn] if l.strip() not in ("<BOD>", "<EOD>")]
        query = "\n".join(lines)
        per_user[int(d["user-id"])].append((query, [str(i) for i in d["relevant-id"]]))
    for user, qs in per_user.items():
        yield f"user-{user}", memories[user], qs


# -- systems -------------------------------------------------------------------
def bm25_ranker(texts: list[str], tok: Callable[[str], list[str]]):
    bm = BM25Okapi([tok(t) for t in texts])

    def rank(query: str, k: int) -> list[int]:
        scores = bm.get_scores(tok(query))
        return sorted(range(len(texts)), key=lambda i: -scores[i])[:k]

    return rank


def words(t: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", t.lower())


def cjk_bigrams(t: str) -> list[str]:
    out = []
    for run in re.findall(r"[\u4e00-\u9fff]+|[a-z0-9]+", t.lower()):
        if re.match(r"[\u4e00-\u9fff]", run):
            out += [run[i:i + 2] for i in range(len(run) - 1)] or [run]
        else:
            out.append(run)
    return out


def build_state(base: Path, name: str, episodes: list[dict], settings_kw: dict, neo4j_store) -> Memory:
    state = base / name
    state.mkdir(parents=True)
    src = state / "corpus.jsonl"
    with open(src, "w", encoding="utf-8") as fh:
        for ep in episodes:
            fh.write(json.dumps(ep, ensure_ascii=False) + "\n")
    if neo4j_store is not None:
        neo4j_store.clear()
    mem = Memory(Settings(state_dir=state, **settings_kw))
    ingest(mem, [src], fmt="episodes")
    return mem


def recall_at(ranked: list[str], gold: list[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def evaluate(tasks, to_episodes, bm25_tok, ks, base: Path, settings_kw, neo4j_store, systems):
    sums = {s: defaultdict(float) for s in systems}
    lat = {s: [] for s in systems}
    n = 0
    kmax = max(ks)
    for name, units, qs in tasks:
        eps = to_episodes(units)
        ids = [e["id"] for e in eps]
        rank_bm25 = bm25_ranker([e["text"] for e in eps], bm25_tok)
        mem = build_state(base, name, eps, settings_kw, neo4j_store)
        # generous deadlines: this measures ranking quality, not latency
        mem.deadlines = {t: 30.0 for t in mem.deadlines}
        for query, gold in qs:
            n += 1
            for s in systems:
                t0 = time.perf_counter()
                if s == "bm25":
                    ranked = [ids[i] for i in rank_bm25(query, kmax)]
                else:
                    res = mem.recall(query, k=kmax, tiers=TIERS_OF[s])
                    ranked = [h.episode_id for h in res.hits]
                lat[s].append((time.perf_counter() - t0) * 1000)
                for k in ks:
                    sums[s][k] += recall_at(ranked, gold, k)
        mem.close()
    return {s: {k: 100 * v / n for k, v in sums[s].items()} for s in systems}, n, lat


def locomo_episodes(units):
    return [{"id": uid, "text": text, "source": "jsonl", "entities": [{"name": spk, "type": "person"}]}
            for uid, text, spk, _date in units]


def madial_episodes(units):
    return [{"id": mid, "text": text, "source": "jsonl", "first_ts": f"{ts}T00:00:00"} for mid, text, ts in units]


def print_table(title: str, res: dict, ks, n: int, lat: dict) -> None:
    print(f"\n{title} ({n} queries)")
    head = "| system | " + " | ".join(f"R@{k}" for k in ks) + " | p50 ms |"
    print(head)
    print("|" + "---|" * (len(ks) + 2))
    for s, row in res.items():
        l = sorted(lat[s])
        p50 = l[len(l) // 2] if l else 0
        print(f"| {s} | " + " | ".join(f"{row[k]:.1f}" for k in ks) + f" | {p50:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path)
    ap.add_argument("--madial-memory", type=Path)
    ap.add_argument("--madial-dialogues", type=Path)
    ap.add_argument("--neo4j-uri", help="use this server (else one is started from scripts/neo4j)")
    ap.add_argument("--no-neo4j", action="store_true", help="skip the Neo4j tier")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    args = ap.parse_args()
    systems = [s for s in args.systems.split(",") if s]

    server = None
    settings_kw: dict = {}
    store = None
    if args.no_neo4j:
        systems = [s for s in systems if s not in ("neo4j", "fused3")]
    else:
        uri = args.neo4j_uri
        if not uri:
            from neo4j_server import Neo4jServer

            server = Neo4jServer()
            uri = server.start()
        settings_kw = {"neo4j_uri": uri}
        from core.tiers.neo4j_tier import Neo4jStore

        store = Neo4jStore(uri)
    try:
        with tempfile.TemporaryDirectory(prefix="ars-bench-") as tmp:
            base = Path(tmp)
            if args.locomo:
                ks = [5, 10, 25]
                res, n, lat = evaluate(locomo_tasks(args.locomo), locomo_episodes, words, ks, base / "locomo",
                                       settings_kw, store, systems)
                print_table("LoCoMo dev, recall of evidence turns", res, ks, n, lat)
            if args.madial_memory and args.madial_dialogues:
                ks = [1, 3, 5, 10]
                res, n, lat = evaluate(madial_tasks(args.madial_memory, args.madial_dialogues), madial_episodes,
                                       cjk_bigrams, ks, base / "madial", settings_kw, store, systems)
                print_table("MADial-Bench zh dev, recall of relevant memories", res, ks, n, lat)
    finally:
        if store is not None:
            store.close()
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
