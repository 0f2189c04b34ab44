"""Fit recall's fusion on the dev data, leave one conversation out, and compare it with
each tier alone and with the fusion in the code, in one run.

    python bench/recall_quality.py --locomo ... --madial-memory ... --madial-dialogues ... \
        --dump /tmp/tiers.json
    python bench/fit_fusion.py /tmp/tiers.json [--write]

The dump holds, for every dev query, what each tier answered (rank, score and
breakdown of its top ``FUSION_DEPTH``) and the fused order recall made. Here
every candidate any tier returned becomes one row of features (``features``:
per tier its min-max share, its reciprocal rank and whether it returned it at
all; how many tiers agree) labelled by whether it is gold; a logistic regression is fitted on all conversations but
one (LoCoMo's five and MADial's two users: seven folds) and ranks the one left
out. Reported per fold and overall: R@3/5/10 (LoCoMo) and R@3/5 (MADial) of
each tier alone, the score fusion (the code's before), the fitted fusion, and
the paired bootstrap 95 % CI of fitted minus best tier and minus before.
``--write`` prints the weights fitted on all folds.

Measured at this writing (docs/benchmarks.md, "Recall quality"): the fitted
fusion was not better than the score fusion on every fold, so recall keeps
``scoring.fuse``; rerun this after a tier changes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_quality import bootstrap_ci, recall_at  # noqa: E402  (the same metric and CI as the quality bench)

# -- the features: what each tier said about a candidate ------------------------------------------
TIERS = ("sqlite", "neo4j", "files", "dense")
PER_TIER = ("share", "rr", "in")
FEATURES = tuple(f"{t}_{p}" for t in TIERS for p in PER_TIER) + ("agree",)
SCORE_FLOOR = 0.1  # as scoring.SCORE_FLOOR: every hit a tier returned counts for something


def _shares(scores: Sequence[float]) -> list[float]:
    hi, lo = max(scores), min(scores)
    if hi - lo <= 1e-12:
        return [1.0] * len(scores)
    return [SCORE_FLOOR + (1.0 - SCORE_FLOOR) * (s - lo) / (hi - lo) for s in scores]


def features(reports: dict[str, Iterable[tuple[str, int, float]]]) -> tuple[list[str], list[list[float]]]:
    """(candidate ids, one row of ``FEATURES`` per candidate) from each tier's
    (episode id, rank, score) answers (plain lists, as recall would compute them)."""
    ids: dict[str, int] = {}
    cells: list[tuple[str, int, float, float]] = []  # (id, tier index, share, rr)
    answering = 0
    for ti, tier in enumerate(TIERS):
        hits = list(reports.get(tier) or ())
        if not hits:
            continue
        answering += 1
        for (eid, rank, _score), share in zip(hits, _shares([h[2] for h in hits])):
            ids.setdefault(eid, len(ids))
            cells.append((eid, ti, share, 1.0 / max(1, rank)))
    x = [[0.0] * len(FEATURES) for _ in ids]
    for eid, ti, share, rr in cells:
        row = x[ids[eid]]
        base = ti * len(PER_TIER)
        row[base], row[base + 1], row[base + 2] = share, rr, 1.0
    if answering:
        for row in x:
            row[-1] = sum(row[2::len(PER_TIER)][:len(TIERS)]) / answering
    return list(ids), x


def rows_of(q: dict) -> tuple[list[str], np.ndarray]:
    """(candidate ids, feature matrix) of one dumped query."""
    reports = {t: [(h[0], h[1], h[2]) for h in hits] for t, hits in q["tiers"].items()}
    ids, x = features(reports)
    return ids, np.array(x).reshape(len(ids), len(FEATURES))


def fit(xs: np.ndarray, ys: np.ndarray, l2: float = 1.0, iters: int = 60) -> np.ndarray:
    """Logistic regression by Newton's method with an L2 penalty (not on the bias): small,
    exact and dependency-free. Returns [bias, w...]."""
    a = np.hstack([np.ones((len(xs), 1)), xs])
    w = np.zeros(a.shape[1])
    pen = np.full(a.shape[1], l2)
    pen[0] = 0.0
    pos = ys.mean()
    # balance the classes: a handful of gold among hundreds of candidates per query
    sw = np.where(ys > 0, 0.5 / max(pos, 1e-9), 0.5 / max(1 - pos, 1e-9))
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(a @ w)))
        g = a.T @ (sw * (p - ys)) + pen * w
        h = (a * (sw * p * (1 - p))[:, None]).T @ a + np.diag(pen + 1e-9)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def ranked(ids: list[str], x: np.ndarray, w: np.ndarray) -> list[str]:
    s = x @ w[1:]
    order = sorted(range(len(ids)), key=lambda i: (-s[i], ids[i]))
    return [ids[i] for i in order]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--write", action="store_true", help="print the weights fitted on every fold")
    args = ap.parse_args()
    queries = json.loads(args.dump.read_text())
    prepared = []
    for q in queries:
        ids, x = rows_of(q)
        y = np.array([1.0 if i in set(q["gold"]) else 0.0 for i in ids])
        prepared.append((q, ids, x, y))
    folds = list(dict.fromkeys(q["task"] for q in queries))
    corpus = {f: ("madial" if f.startswith("user-") else "locomo") for f in folds}
    tiers = sorted({t for q in queries for t in q["tiers"]})
    systems = tiers + ["before", "fitted"]
    res: dict[str, dict[str, dict[int, list[float]]]] = {s: defaultdict(lambda: defaultdict(list)) for s in systems}
    for fold in folds:
        train = [p for p in prepared if p[0]["task"] != fold]
        w = fit(np.vstack([p[2] for p in train]), np.concatenate([p[3] for p in train]), args.l2)
        for q, ids, x, _y in (p for p in prepared if p[0]["task"] == fold):
            out = {t: [h[0] for h in q["tiers"].get(t, [])] for t in tiers}
            out["before"] = q["fused"]
            out["fitted"] = ranked(ids, x, w)
            for s, r in out.items():
                for k in (1, 3, 5, 10):
                    res[s][fold][k].append(recall_at(r, q["gold"], k))
    for name, ks, key_k in (("locomo", (3, 5, 10), 10), ("madial", (1, 3, 5), 5)):
        fs = [f for f in folds if corpus[f] == name]
        if not fs:
            continue
        n = sum(len(res["before"][f][key_k]) for f in fs)
        print(f"\n{name} dev, leave one conversation out ({n} queries; fitted on the other {len(folds) - 1} folds)")
        print("| system | " + " | ".join(f"R@{k}" for k in ks) + " | " + " | ".join(f"{f} R@{key_k}" for f in fs) + " |")
        print("|" + "---|" * (1 + len(ks) + len(fs)))
        for s in systems:
            allq = {k: [v for f in fs for v in res[s][f][k]] for k in ks}
            print(f"| {s} | " + " | ".join(f"{100 * np.mean(allq[k]):.1f}" for k in ks) + " | "
                  + " | ".join(f"{100 * np.mean(res[s][f][key_k]):.1f}" for f in fs) + " |")
        best = max(tiers, key=lambda t: np.mean([v for f in fs for v in res[t][f][key_k]]))
        for other in (best, "before"):
            a = [v for f in fs for v in res["fitted"][f][key_k]]
            b = [v for f in fs for v in res[other][f][key_k]]
            d, lo, hi = bootstrap_ci(a, b)
            ahead = sum(np.mean(res["fitted"][f][key_k]) > np.mean(res[other][f][key_k]) for f in fs)
            print(f"fitted - {other}: R@{key_k} {d:+.1f} (95 % CI {lo:+.1f} to {hi:+.1f}), ahead in {ahead} of {len(fs)} folds")
    if args.write:
        w = fit(np.vstack([p[2] for p in prepared]), np.concatenate([p[3] for p in prepared]), args.l2)
        print("\nWEIGHTS = {")
        for name, v in zip(FEATURES, w[1:]):
            print(f"    {name!r}: {v:.4f},")
        print("}")


if __name__ == "__main__":
    main()
