"""Fit recall's fusion on the dev data, leave one conversation out, and compare it with
each tier alone, with the fusion in the code, and with the best any reordering of the
same candidates could do, in one run.

    python bench/recall_quality.py --locomo ... --madial-memory ... --madial-dialogues ... \
        --dump /tmp/tiers.json
    python bench/fit_fusion.py /tmp/tiers.json [--write] [--gbdt]

The dump holds, for every dev query, what each tier answered (rank, score and
breakdown of its top ``FUSION_DEPTH``) and the fused order recall made. Here
every candidate any tier returned becomes one row of features labelled by
whether it is gold, and a model fitted on all conversations of the same corpus
but one (LoCoMo's five, MADial's two users) ranks the one left out. Feature sets:

``tiers``       per tier its min-max share, its reciprocal rank and whether it
                returned it at all; how many tiers agree (the fusion's own inputs)
``components``  and each named component of each tier's score (bm25, context,
                token_match, phrase, entity, recency, time; cosine, context),
                divided by that component's largest value in the query
``all``         and the unit's shape: whether it only asks (ends in a question),
                how strongly its session answered (the sum of its session's
                shares), whether it is its session's best

``fitted-<set>`` is a logistic regression on a set; ``gbdt`` (``--gbdt``,
``pip install lightgbm``) a LambdaMART ranker on ``all``: a nonlinear model
over the same signals. ``oracle`` puts every gold candidate first: the ceiling
of any reordering of what the tiers returned (its R@k is bounded by the pool).
Reported per fold and overall: R@3/5/10 (LoCoMo) and R@3/5 (MADial), and the
paired bootstrap 95 % CI of each fitted row minus the best tier and minus the
score fusion (``before``). ``--write`` prints the weights fitted on every fold.

Measured (docs/benchmarks.md, "Recall quality"): no fitted row was better than
the score fusion on every fold, and none came near the targets of issue 33
while the oracle of the same pools did: the tiers' signals, not the way they
are combined, are what limits the top of the list.
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
SHAPE = ("only_asks", "session_vote", "session_best")
FEATURE_SETS = ("tiers", "components", "all")
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


def component_names(queries: Sequence[dict]) -> list[str]:
    """Every (tier, score component) the dump holds, as ``tier:component``."""
    return sorted({f"{t}:{c}" for q in queries for t, hits in q["tiers"].items() for h in hits for c in h[3]})


def extra_features(q: dict, ids: list[str], components: Sequence[str], shape: bool) -> np.ndarray:
    """Per candidate: each score component of each tier over its largest in the query, and
    with ``shape`` the unit's shape (``SHAPE``): whether it only asks, its session's strength
    (the sum of its session's shares over the best candidate's) and whether it leads its session."""
    index = {e: i for i, e in enumerate(ids)}
    cols = {c: j for j, c in enumerate(components)}
    out = np.zeros((len(ids), len(components) + (len(SHAPE) if shape else 0)))
    share = np.zeros(len(ids))
    for tier, hits in q["tiers"].items():
        keys = {c for h in hits for c in h[3]}
        top = {c: max(abs(h[3].get(c, 0.0)) for h in hits) or 1.0 for c in keys}
        for h, sh in zip(hits, _shares([h[2] for h in hits])):
            i = index[h[0]]
            share[i] += sh
            for c, v in h[3].items():
                j = cols.get(f"{tier}:{c}")
                if j is not None:
                    out[i, j] = v / top[c]
    if shape:
        meta = q.get("episodes", {})
        sessions: dict[str, list[int]] = defaultdict(list)
        for e, i in index.items():
            session, asks = meta.get(e, ["", False])
            out[i, len(components)] = 1.0 if asks else 0.0
            if session:
                sessions[session].append(i)
        best = share.max() or 1.0
        for members in sessions.values():
            vote = share[members].sum() / best
            lead = max(members, key=lambda i: share[i])
            for i in members:
                out[i, len(components) + 1] = vote
                out[i, len(components) + 2] = 1.0 if i == lead else 0.0
    return out


def rows_of(q: dict, components: Sequence[str] = (), shape: bool = False) -> tuple[list[str], np.ndarray]:
    """(candidate ids, feature matrix) of one dumped query."""
    reports = {t: [(h[0], h[1], h[2]) for h in hits] for t, hits in q["tiers"].items()}
    ids, x = features(reports)
    x = np.array(x).reshape(len(ids), len(FEATURES))
    if components or shape:
        x = np.hstack([x, extra_features(q, ids, components, shape)])
    return ids, x


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


def order(ids: list[str], s: np.ndarray) -> list[str]:
    return [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-s[i], ids[i]))]


def ranked(ids: list[str], x: np.ndarray, w: np.ndarray) -> list[str]:
    return order(ids, x @ w[1:])


def gbdt_ranker(train: list[tuple[dict, list[str], np.ndarray, np.ndarray]]):
    """A LambdaMART ranker (lightgbm, a bench-only dependency; its core API, no scikit-learn) fitted on ``train``."""
    try:
        import lightgbm
    except ImportError:
        raise SystemExit("--gbdt needs lightgbm: pip install lightgbm (a bench-only dependency)") from None
    data = lightgbm.Dataset(np.vstack([p[2] for p in train]), np.concatenate([p[3] for p in train]),
                            group=[len(p[1]) for p in train])
    params = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20,
              "verbose": -1, "seed": 1, "num_threads": 2}
    model = lightgbm.train(params, data, num_boost_round=200)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--gbdt", action="store_true", help="also a LambdaMART ranker on every feature (lightgbm)")
    ap.add_argument("--write", action="store_true", help="print the weights fitted on every fold (tier features)")
    args = ap.parse_args()
    queries = json.loads(args.dump.read_text())
    components = component_names(queries)
    shaped = all("episodes" in q for q in queries)
    sets = [s for s in FEATURE_SETS if s != "all" or shaped]
    if not shaped:
        print("the dump holds no unit shapes (a dump from before them): the 'all' features are left out")
    prepared = {}
    for fs in sets:
        prepared[fs] = []
        for q in queries:
            ids, x = rows_of(q, components if fs != "tiers" else (), fs == "all")
            y = np.array([1.0 if i in set(q["gold"]) else 0.0 for i in ids])
            prepared[fs].append((q, ids, x, y))
    folds = list(dict.fromkeys(q["task"] for q in queries))
    corpus = {f: ("madial" if f.startswith("user-") else "locomo") for f in folds}
    tiers = sorted({t for q in queries for t in q["tiers"]})
    fitted = [f"fitted-{fs}" for fs in sets] + (["gbdt"] if args.gbdt else [])
    systems = tiers + ["before"] + fitted + ["oracle"]
    res: dict[str, dict[str, dict[int, list[float]]]] = {s: defaultdict(lambda: defaultdict(list)) for s in systems}
    for fold in folds:
        out_of_fold: dict[str, list[list[str]]] = {}
        for fs in sets:
            # trained on the other folds of the same corpus: a Chinese dialogue and an English
            # question are different tasks, and one corpus must not set the other's weights
            train = [p for p in prepared[fs] if p[0]["task"] != fold and corpus[p[0]["task"]] == corpus[fold]]
            w = fit(np.vstack([p[2] for p in train]), np.concatenate([p[3] for p in train]), args.l2)
            out_of_fold[f"fitted-{fs}"] = [ranked(ids, x, w) for q, ids, x, _y in prepared[fs]
                                           if q["task"] == fold]
            if fs == sets[-1] and args.gbdt:
                model = gbdt_ranker(train)
                out_of_fold["gbdt"] = [order(ids, model.predict(x)) for q, ids, x, _y in prepared[fs]
                                       if q["task"] == fold]
        held = [p for p in prepared["tiers"] if p[0]["task"] == fold]
        for j, (q, ids, _x, _y) in enumerate(held):
            out = {t: [h[0] for h in q["tiers"].get(t, [])] for t in tiers}
            out["before"] = q["fused"]
            out["oracle"] = sorted(ids, key=lambda i: (i not in set(q["gold"]), q["fused"].index(i)
                                                       if i in q["fused"] else len(ids)))
            out.update({s: lists[j] for s, lists in out_of_fold.items()})
            for s, r in out.items():
                for k in (1, 3, 5, 10):
                    res[s][fold][k].append(recall_at(r, q["gold"], k))
    for name, ks, key_k in (("locomo", (3, 5, 10), 5), ("madial", (1, 3, 5), 5)):
        fs = [f for f in folds if corpus[f] == name]
        if not fs:
            continue
        n = sum(len(res["before"][f][key_k]) for f in fs)
        print(f"\n{name} dev, leave one conversation out ({n} queries; fitted on the other {len(fs) - 1} folds)")
        print("| system | " + " | ".join(f"R@{k}" for k in ks) + " | " + " | ".join(f"{f} R@{key_k}" for f in fs) + " |")
        print("|" + "---|" * (1 + len(ks) + len(fs)))
        for s in systems:
            allq = {k: [v for f in fs for v in res[s][f][k]] for k in ks}
            print(f"| {s} | " + " | ".join(f"{100 * np.mean(allq[k]):.1f}" for k in ks) + " | "
                  + " | ".join(f"{100 * np.mean(res[s][f][key_k]):.1f}" for f in fs) + " |")
        best = max(tiers, key=lambda t: np.mean([v for f in fs for v in res[t][f][key_k]]))
        print(f"\n| R@{key_k} | against | delta | 95 % CI | ahead in folds |\n|---|---|---|---|---|")
        for s in fitted:
            for other in (best, "before"):
                a = [v for f in fs for v in res[s][f][key_k]]
                b = [v for f in fs for v in res[other][f][key_k]]
                d, lo, hi = bootstrap_ci(a, b)
                ahead = sum(np.mean(res[s][f][key_k]) > np.mean(res[other][f][key_k]) for f in fs)
                print(f"| {s} | {other} | {d:+.1f} | {lo:+.1f} to {hi:+.1f} | {ahead} of {len(fs)} |")
    if args.write:
        pairs = prepared["tiers"]
        w = fit(np.vstack([p[2] for p in pairs]), np.concatenate([p[3] for p in pairs]), args.l2)
        print("\nWEIGHTS = {")
        for name, v in zip(FEATURES, w[1:]):
            print(f"    {name!r}: {v:.4f},")
        print("}")


if __name__ == "__main__":
    main()
