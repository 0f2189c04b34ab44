"""LLM enrichment against a real local HTTP server speaking the
chat-completions API: good answers, fenced JSON, malformed JSON, a schema
mismatch, HTTP 429 insufficient_quota, a timeout; the deterministic fallback
marks episodes pending and ``enrich_pending`` upgrades them later."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from core.config import Settings
from core.enrich import llm
from core.ingest.formats.openclaw import parse_openclaw
from core.models import Episode

from agents_stub.enrich_server import GOOD, OPENCLAW, ChatServer  # the local chat-completions server
from conftest import make_memory


@pytest.fixture
def server():
    s = ChatServer()
    llm._enrichers.clear()  # a fresh client and breaker per test
    yield s
    s.close()
    llm._enrichers.clear()


def settings_for(server: ChatServer, tmp_path: Path, **kw) -> Settings:
    base = dict(state_dir=tmp_path / "state", openai_base_url=server.base_url, openai_model="test-model",
                openai_api_key="sk-test-secret", openai_timeout=2.0, enrich_with_llm=True, neo4j_uri=None)
    base.update(kw)
    return Settings(**base)


@pytest.fixture
def episode() -> Episode:
    """A real parsed episode (deterministically enriched by the parser)."""
    return parse_openclaw(OPENCLAW).episodes[0]


def test_good_answer_is_validated_and_merged(server, tmp_path, episode):
    out = llm.enrich(episode, settings_for(server, tmp_path))
    assert out.meta["enrichment"] == "llm" and out.meta["enrichment_model"] == "test-model"
    assert "enrichment_error" not in out.meta
    assert out.summary == GOOD["summary"]
    assert out.topics[:3] == ["backup", "nas", "ssh host keys"]
    names = {(e.name, e.type) for e in out.entities}
    # the model's entities (an unknown type becomes a concept) ...
    assert {("NAS", "product"), ("Lin Wei", "person"), ("known_hosts", "file"),
            ("firmware update", "concept")} <= names
    # ... and the ones the parser knew for sure stay
    assert {("exec", "tool"), ("/var/log/backup.log", "file"), ("ssh-keygen", "command")} <= names
    assert ("rsync", "copies to", "NAS") in {(r.src, r.rel, r.dst) for r in out.relations}
    # one request, in the chat-completions shape, JSON output asked for, the key sent
    assert len(server.requests) == 1
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["model"] == "test-model"
    assert req["body"]["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in req["body"]["messages"]] == ["system", "user"]
    assert "nightly backup to the NAS failed" in req["body"]["messages"][1]["content"]
    assert req["auth"] == "Bearer sk-test-secret"
    # the text itself is never changed by enrichment
    assert out.text == episode.text and out.id == episode.id


def test_fenced_json_is_accepted(server, tmp_path, episode):
    server.mode = "fenced"
    out = llm.enrich(episode, settings_for(server, tmp_path))
    assert out.meta["enrichment"] == "llm" and out.summary == GOOD["summary"]


@pytest.mark.parametrize("mode, reason", [("malformed", "malformed JSON"), ("schema", "schema mismatch")])
def test_bad_answers_fall_back_and_mark_pending(server, tmp_path, episode, mode, reason):
    server.mode = mode
    s = settings_for(server, tmp_path)
    out = llm.enrich(episode, s)
    assert out.meta["enrichment"] == "deterministic:pending"
    assert reason in out.meta["enrichment_error"] and "\n" not in out.meta["enrichment_error"]
    assert out.summary == episode.summary  # the parser's deterministic result, kept
    assert out.summary.startswith("NAS backup repair — The nightly backup to the NAS failed")
    assert out.entities == episode.entities
    # a bad answer is not an outage: the next call still goes to the model
    server.mode = "good"
    assert llm.enrich(episode, s).meta["enrichment"] == "llm"
    assert len(server.requests) == 2


def test_quota_exhausted_429_falls_back_without_retries(server, tmp_path, episode):
    server.mode = "quota"
    s = settings_for(server, tmp_path)
    out = llm.enrich(episode, s)
    assert out.meta["enrichment"] == "deterministic:pending"
    err = out.meta["enrichment_error"]
    assert "HTTP 429" in err and "insufficient_quota" in err
    assert "sk-test-secret" not in err
    assert len(server.requests) == 1  # max_retries=0: one request, no retry storm
    # the breaker is open: the rest of a batch is marked pending without asking
    t0 = time.perf_counter()
    more = llm.enrich_many([episode] * 5, s)
    assert time.perf_counter() - t0 < 1.0
    assert len(server.requests) == 1
    assert all(e.meta["enrichment"] == "deterministic:pending" and "skipped" in e.meta["enrichment_error"]
               for e in more)


def test_timeout_falls_back_within_the_client_timeout(server, tmp_path, episode):
    server.mode = "slow"
    s = settings_for(server, tmp_path, openai_timeout=0.5)
    t0 = time.perf_counter()
    out = llm.enrich(episode, s)
    elapsed = time.perf_counter() - t0
    assert out.meta["enrichment"] == "deterministic:pending"
    assert out.meta["enrichment_error"].startswith("timeout")
    assert elapsed < 2.5, elapsed  # the server would have taken 3 s
    assert len(server.requests) == 1


def test_llm_not_asked_for_is_plain_deterministic(server, tmp_path, episode):
    out = llm.enrich(episode, settings_for(server, tmp_path, enrich_with_llm=False))
    assert out.meta["enrichment"] == "deterministic"
    assert server.requests == []
    # asked for but not configured at all: pending, with a reason a person can act on
    bare = Settings(state_dir=tmp_path / "s2", enrich_with_llm=True, openai_base_url=None, neo4j_uri=None,
                    openai_api_key=None)
    out = llm.enrich(episode, bare)
    assert out.meta["enrichment"] == "deterministic:pending"
    assert "not configured" in out.meta["enrichment_error"]


def test_an_episode_without_enrichment_gets_the_deterministic_base(server, tmp_path):
    ep = Episode(id="manual:n:0", text="user: please run `pytest -q` in core/ingest and fix parsers.py")
    server.mode = "quota"
    out = llm.enrich(ep, settings_for(server, tmp_path))
    assert out.meta["enrichment"] == "deterministic:pending"
    assert ("parsers.py", "file") in {(e.name, e.type) for e in out.entities}
    assert out.summary.startswith("please run")


def test_enrich_pending_upgrades_marked_episodes_later(server, tmp_path):
    s = settings_for(server, tmp_path)
    eps = parse_openclaw(OPENCLAW).episodes
    assert len(eps) == 3
    # ingest time: the quota is gone, every episode keeps its deterministic enrichment, marked
    server.mode = "quota"
    marked = llm.enrich_many(eps, s)
    assert [e.meta["enrichment"] for e in marked] == ["deterministic:pending"] * 3
    memory = make_memory(tmp_path / "state", neo4j_uri=None)
    try:
        memory.store(marked)
        assert llm.pending_ids(memory) == [e.id for e in eps]
        # still down: nothing upgraded, nothing lost
        llm._enrichers.clear()
        assert llm.enrich_pending(memory, s) == (0, 3)
        assert all(memory.sqlite.get(e.id).meta["enrichment"] == "deterministic:pending" for e in eps)
        # the quota is back: `ars enrich --pending` upgrades them
        server.mode = "good"
        llm._enrichers.clear()
        assert llm.enrich_pending(memory, s) == (3, 0)
        for e in eps:
            stored = memory.sqlite.get(e.id)
            assert stored.meta["enrichment"] == "llm" and stored.summary == GOOD["summary"]
            assert stored.text == e.text and stored.meta.get("prev") == e.meta.get("prev")
        assert llm.pending_ids(memory) == []
        assert llm.enrich_pending(memory, s) == (0, 0)
    finally:
        memory.close()


def test_parse_answer_rejects_what_is_not_the_schema():
    assert llm.parse_answer(json.dumps(GOOD)).summary == GOOD["summary"]
    for bad in ["", "[1, 2]", '{"summary": ""}', '{"summary": "x", "entities": [{"type": "tool"}]}', "not json"]:
        with pytest.raises(llm.EnrichmentFailed):
            llm.parse_answer(bad)
