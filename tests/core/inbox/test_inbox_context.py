"""core/inbox/context.py: the last turns of an agent's transcript, read safely
(a FIFO, a missing file, a huge file, damage, secrets), and core/memory/confidence.py:
an absolute cue beside a recall's normalised scores (issue 24). Real files,
a real FIFO, a real recall on the seeded demo."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tuihelp import demo, demo_template  # noqa: F401 - the seeded-demo fixtures
from tuihelp import open_ars

from core.inbox.context import MAX_BYTES, request_context, transcript_tail


def _line(role: str, content) -> str:
    return json.dumps({"type": role, "message": {"role": role, "content": content}})


def test_the_last_turns_are_one_line_each_with_tool_calls_and_results(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    rows = [_line("user", f"turn {i}") for i in range(10)]
    rows += [json.dumps({"type": "summary", "summary": "not a turn"}), "{torn line",
             _line("assistant", [{"type": "tool_use", "name": "Bash", "input": {"command": "ls -la\n/tmp"}}]),
             _line("user", [{"type": "tool_result", "content": [{"type": "text", "text": "total 0"}]}])]
    path.write_text("\n".join(rows) + "\n")
    tail = transcript_tail(path, turns=3)
    assert tail == ["user: turn 9", "assistant: tool Bash: ls -la /tmp", "user: result: total 0"]


def test_secrets_in_the_transcript_are_redacted(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    secret = "sk-ant-api03-" + "B" * 40
    path.write_text(_line("user", f"use the key {secret} please") + "\n")
    (only,) = transcript_tail(path)
    assert secret not in only and "[secret:" in only


def test_a_huge_transcript_is_read_from_its_end_only(tmp_path: Path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as f:
        filler = _line("user", "x" * 1000)
        for _ in range(3 * MAX_BYTES // len(filler)):
            f.write(filler + "\n")
        f.write(_line("assistant", "the last word") + "\n")
    t0 = time.perf_counter()
    tail = transcript_tail(path, turns=1)
    assert tail == ["assistant: the last word"]
    assert time.perf_counter() - t0 < 2.0  # not a timing claim: a whole-file read of a huge file would hang here


def test_what_cannot_be_read_is_one_line_never_a_hang(tmp_path: Path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    (line,) = transcript_tail(fifo)  # a FIFO with no writer would block an ordinary open
    assert "cannot be read" in line and "not a regular file" in line
    (line,) = transcript_tail(tmp_path / "gone.jsonl")
    assert "not found" in line
    (line,) = transcript_tail("/etc/passwd")
    assert "only a .jsonl transcript is read" in line
    locked = tmp_path / "locked.jsonl"
    locked.write_text(_line("user", "hi") + "\n")
    os.symlink(locked, tmp_path / "link.jsonl")
    (line,) = transcript_tail(tmp_path / "link.jsonl")  # a symlink the agent planted is not followed
    assert "cannot be read" in line
    assert request_context({}) == [] and request_context({"transcript_path": 7}) == []


def test_the_confidence_cue_tells_a_weak_best_hit_from_a_strong_one(demo: Path):
    from core.memory.confidence import cue, weak_result
    from core.models import Hit, RecallResult

    with open_ars(demo) as ars:
        strong = ars.recall("Neo4j outage", k=5)
    assert weak_result(strong) == ""
    top = cue(strong.hits[0], strong.tokens)
    assert top.level == "strong" and top.matched == top.of == 2
    assert top.text().startswith("2/2 terms")
    # the issue's case: 备份's hit #1 normalised to 1.000 by the dense tier alone, cosine 0.175
    dense = Hit(episode_id="e1", tier="dense", rank=1, score=0.175, breakdown={"cosine": 0.175})
    weak = RecallResult(query="备份", tokens=["备份"], k=5, tiers=[], degraded=False,
                        hits=[Hit(episode_id="e1", tier="fused", rank=1, score=1.0, per_tier={"dense": dense})])
    c = cue(weak.hits[0], weak.tokens)
    assert (c.level, c.matched, c.of, c.cosine) == ("weak", 0, 1, 0.175)
    assert c.text() == "0/1 terms · cos 0.17 · weak" or c.text() == "0/1 terms · cos 0.18 · weak"
    assert "weak matches only" in weak_result(weak) and "best cosine 0.1" in weak_result(weak)


def test_a_hermes_request_shows_the_sessions_last_messages_from_state_db(tmp_path: Path):
    """A Hermes hook names its state.db and session: the pane shows the session's last
    messages (tool calls and results, no system prompt, no rewound rows), read-only."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[2] / "fixtures" / "agent_stores"))
    from hermes_store import conformance_store

    db = tmp_path / ".hermes" / "state.db"
    conformance_store(db)
    before = sorted(p.name for p in db.parent.iterdir())
    lines = request_context({"hermes_db": str(db), "session_id": "20260909_100000_abc123"}, turns=4)
    assert lines[-2:] == ["user: Now reload nginx on edge-2 only", "assistant: Reloaded edge-2."], lines
    assert not any("SYSTEM-PROMPT" in x or "REWOUND" in x for x in lines)
    every = request_context({"hermes_db": str(db), "session_id": "20260909_100000_abc123"}, turns=50)
    assert any("tool terminal" in x and "nginx -t" in x for x in every), every
    assert any(x.startswith("result of terminal: syntax is ok") for x in every), every
    assert sorted(p.name for p in db.parent.iterdir()) == before  # read-only: no -wal/-shm made
    assert request_context({"hermes_db": str(db), "session_id": "nope"}) == [f"no session nope in {db}"]
    fifo = tmp_path / "state.db.fifo"
    os.mkfifo(fifo)
    assert "not read" in request_context({"hermes_db": str(fifo), "session_id": "x"})[0]
    assert "cannot be read" in request_context({"hermes_db": str(tmp_path / "x" / "state.db"), "session_id": "x"})[0]


def test_an_openclaw_request_shows_the_sessions_last_turns_from_its_agent_database(tmp_path: Path):
    """The OpenClaw hook names the agent database and the session (the key hooks see, which
    session_nodes maps to the transcript's id when OpenClaw keeps one): the last turns, as
    ingest words them, plain and zstd events alike."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[2] / "fixtures" / "agent_stores"))
    from openclaw_store import OpenClawStore, assistant, header, user

    store = OpenClawStore(tmp_path / ".openclaw").create()
    store.add_events("sess-a", [header("sess-a"), user("k1", None, "Where does the VPN config live?", 1),
                                assistant("k2", "k1", "In vault path secret/vpn.", 2)])
    db = store.db
    lines = request_context({"openclaw_db": str(db), "session_id": "sess-a"})
    assert any("Where does the VPN config live?" in x for x in lines), lines
    assert any("In vault path secret/vpn." in x for x in lines), lines
    assert request_context({"openclaw_db": str(db), "session_id": "nope"})[0].startswith("no messages of session nope")
    assert "not read" in request_context({"openclaw_db": str(tmp_path / "x.sqlite"), "session_id": "sess-a"})[0]
