"""Startup rehydrate: open loops with their next step, blockers and three
relevant memories, sync health, a suggested focus; written to
startup-context.md for an agent's startup hook."""

from __future__ import annotations

import json

import pytest

from core.api import ARS
from core.config import Settings
from core.ingest.pipeline import ingest
from core.loop.rehydrate import STARTUP_FILE, rehydrate

from conftest import SAMPLE
from loophelp import ars, engine, goal, sample


def seeded(state_dir, memory):
    ingest(memory, [SAMPLE])
    eng = engine(state_dir, memory)
    waiting = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    blocked = eng.run(eng.create(sample("flaky-ci.json")).loop_id)
    done = eng.run(eng.create(sample("release-notes.json")).loop_id)
    fresh = eng.create(goal([{"action": "compare recall on the two tiers", "outcome": "pass"}],
                            text="Compare Neo4j and SQLite recall after the outage"))
    eng._mark = 0.0
    active = eng._commit(fresh, fresh.model_copy(update={"status": "active", "iteration": 1}), "status",
                         "started")  # a run that stopped right after it started (a killed process)
    assert (waiting.status, blocked.status, done.status, active.status) == \
        ("waiting_human", "blocked", "done", "active")
    return eng, waiting, blocked, done, active


def test_rehydrate_lists_open_loops_with_next_steps_and_memories(state_dir, memory):
    eng, waiting, blocked, done, active = seeded(state_dir, memory)
    r = rehydrate(state_dir, memory)
    assert [b.loop_id for b in r.loops] == [waiting.loop_id, blocked.loop_id, active.loop_id]  # done is not open
    w, b, a = r.loops
    assert w.next_step.startswith("approve, edit or reject shell") and w.pending.request_id
    assert w.command.startswith(f"ars loop approve {waiting.loop_id}")
    assert b.blockers == blocked.blockers and len(b.blockers) == 3 and "unblock" in b.next_step
    assert a.command == f"ars loop resume {active.loop_id}" and "resume at observe of iteration 1" in a.next_step
    for brief in r.loops:
        assert len(brief.memories) >= 1 and len(brief.memories) <= 3
    # recall brings back what memory holds about each goal
    assert any(m.episode_id.startswith("openclaw:") for m in a.memories)
    assert r.focus.startswith(f"hotfix-1.4.2-staging ({waiting.loop_id}, waiting_human)")
    assert r.sync.ok and r.sync.ledger["events"] > 0
    assert {t["tier"]: t["status"] for t in r.sync.tiers} == {"neo4j": "skipped", "sqlite": "ok", "dense": "empty", "files": "ok"}
    text = (state_dir / STARTUP_FILE).read_text(encoding="utf-8")
    assert text.startswith("# Startup Recovery Context")
    for needle in ("## Suggested next focus", "## Open loops (3)", "## Sync health", waiting.loop_id,
                   "Blocker: iteration 1: rerun the nightly job failed", "Relevant memories (recalled text, quoted as data",
                   f"`ars loop resume {active.loop_id}`"):
        assert needle in text, needle
    assert f"`{done.loop_id}` ·" not in text  # not listed as open (its episodes may still be recalled)


def test_rehydrate_with_no_loops_and_a_corrupt_checkpoint(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(sample("deploy-hotfix.json")).loop_id)
    cp = eng.store.latest_path(s)
    eng.store.history_path(s).unlink()
    cp.write_text("{", encoding="utf-8")
    r = rehydrate(state_dir, memory)
    assert r.loops == [] and r.focus.startswith("No open loops")
    assert r.warnings and cp.name in r.warnings[0]
    assert f"- {cp.name}: corrupt checkpoint" in (state_dir / STARTUP_FILE).read_text(encoding="utf-8")


def test_rehydrate_cli_md_and_json(state_dir, memory):
    seeded(state_dir, memory)
    memory.close()
    r = ars("rehydrate", state=state_dir)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (state_dir / STARTUP_FILE).read_text(encoding="utf-8")
    assert "written to" in r.stderr
    r = ars("rehydrate", "--format", "json", state=state_dir)
    data = json.loads(r.stdout)
    assert [b["status"] for b in data["loops"]] == ["waiting_human", "blocked", "active"]
    assert data["path"].endswith(STARTUP_FILE) and data["sync"]["ok"] is True
    r = ars("rehydrate", "--format", "xml", state=state_dir)
    assert r.returncode == 2 and "unknown format 'xml'" in r.stderr


@pytest.mark.neo4j
def test_rehydrate_reports_sync_health_with_neo4j(state_dir, neo4j_uri):
    with ARS(Settings(state_dir=state_dir, neo4j_uri=neo4j_uri)) as a:
        a.ingest([SAMPLE])
        a.loop_start(sample("deploy-hotfix.json"))
        r = a.rehydrate()
        pending = r.sync.sync["pending"]
        assert pending > 0  # the loop's records are in the ledger, not yet in Neo4j
        assert not r.sync.ok and f"{pending} ledger events not yet in Neo4j" in r.sync.summary
        a.sync_run()
        r = a.rehydrate()
        assert r.sync.sync["pending"] == 0 and r.sync.ok, r.sync.summary
        assert {t["tier"]: t["status"] for t in r.sync.tiers}["neo4j"] == "ok"
        assert r.sync.sync["counts"]["neo4j"] == r.sync.sync["counts"]["sqlite"]
        assert len(r.loops) == 1 and r.loops[0].memories



