"""A turn an agent hands over (Hermes' sync_turn, OpenClaw's agent_end) as memory
(core/capture/turns.py): recallable when ``capture_turn`` returns, split into parts as
the ingest splits a session, and replaced in place (same ids, nothing doubled) when the
agent's store is ingested later. Real SQLite, ledger and files."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from core.api import ARS, BadInput
from core.config import Settings
from conftest import TEST_DEADLINES

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def ars(state_dir):
    a = ARS(Settings(state_dir=state_dir, embedder="off", **TEST_DEADLINES))
    yield a
    a.close()


def turn(n: int, minutes: float = 1, **kw) -> dict:
    return {"user": f"第 {n} 轮：运行抓取脚本", "assistant": f"完成第 {n} 轮", "ts": (T0 + timedelta(minutes=minutes * n)).isoformat(),
            "turn": f"t{n}", "tools": [{"name": "terminal", "input": {"command": "python boss_scraper.py"}, "exit": 0,
                                        "output": f"抓取了 {130 + n} 个产品经理职位"}], **kw}


def test_a_turn_is_recallable_at_once_with_its_tool_call_and_result(ars):
    ids = ars.capture_turn("hermes", "20261204_120000_abc", turn(7))
    assert ids == ["hermes:20261204_120000_abc:0"]
    hit = ars.recall("抓取了多少个产品经理职位", k=1).hits[0]
    assert hit.episode_id == ids[0]
    ep = ars.memory.sqlite.get(ids[0])
    assert ep.text.splitlines() == ["user: 第 7 轮：运行抓取脚本", "assistant → terminal: command=python boss_scraper.py",
                                    "tool terminal (exit 0): 抓取了 137 个产品经理职位", "assistant: 完成第 7 轮"]
    assert (ep.source, ep.agent, ep.session_id) == ("hermes", "hermes", "20261204_120000_abc")
    # a retried hook hands the same turn over again: it is not added twice
    assert ars.capture_turn("hermes", "20261204_120000_abc", turn(7)) == ids
    assert ars.memory.sqlite.get(ids[0]).text == ep.text


def test_parts_split_as_the_ingest_splits_and_the_store_ingest_replaces_them_in_place(ars, tmp_path):
    session = "20261204_120000_def"
    got = [ars.capture_turn("hermes", session, turn(n, minutes=1 if n < 5 else 50)) for n in range(1, 8)]
    # turns 5.. come 50 minutes apart: every one of them starts a part (the 30-minute gap)
    assert got[0] == got[3] == [f"hermes:{session}:0"] and got[4] == [f"hermes:{session}:1"]
    assert got[6] == [f"hermes:{session}:3"]
    assert ars.episode_count() == 4

    # later, Hermes' own store is ingested (the catch-up): the same session, the same parts
    messages = []
    for n in range(1, 8):
        t = turn(n, minutes=1 if n < 5 else 50)
        ts = datetime.fromisoformat(t["ts"]).timestamp()
        messages += [{"role": "user", "content": t["user"], "timestamp": ts},
                     {"role": "assistant", "content": None, "timestamp": ts, "tool_calls": [
                         {"id": f"c{n}", "type": "function",
                          "function": {"name": "terminal", "arguments": json.dumps({"command": "python boss_scraper.py"})}}]},
                     {"role": "tool", "tool_name": "terminal", "content": t["tools"][0]["output"], "timestamp": ts},
                     {"role": "assistant", "content": t["assistant"], "timestamp": ts}]
    export = tmp_path / "sessions-export.jsonl"
    export.write_text(json.dumps({"id": session, "source": "cli", "messages": messages}, ensure_ascii=False) + "\n")
    report = ars.ingest([export], fmt="hermes")
    assert report.episodes_added + report.duplicates_skipped == 4  # the same four ids
    assert ars.episode_count() == 4  # replaced in place: nothing stored twice
    hits = ars.recall("抓取了 137 个产品经理职位", k=10).hits
    assert len({h.episode_id for h in hits if h.episode_id.startswith(f"hermes:{session}:")}) == len(
        [h for h in hits if h.episode_id.startswith(f"hermes:{session}:")])


def test_other_agents_and_bad_turns(ars):
    assert ars.capture_turn("my-bot", "s1", {"user": "hello there", "assistant": "hi"}) == ["jsonl:s1:0"]
    assert ars.capture_turn("openclaw", "oc-1", {"user": "HEARTBEAT_OK", "assistant": "NO_REPLY"}) == []
    big = ars.capture_turn("openclaw", "oc-1", {"user": "x" * (1 << 20) + " 大段粘贴", "assistant": "ok \ud800 done"})
    # a megabyte paste is cut to one message's share, and the answer after it starts the next part
    assert big == ["openclaw:oc-1:0", "openclaw:oc-1:1"]
    assert len(ars.memory.sqlite.get(big[0]).text) <= 12_000
    answer = ars.memory.sqlite.get(big[1]).text
    assert answer.startswith("assistant: ok ") and answer.endswith(" done")
    answer.encode("utf-8")  # the lone surrogate was made storable
    for bad, why in [(None, "object"), ({"user": 5}, "must be text"), ({"tools": "ls"}, "list"),
                     ({"tools": ["ls"]}, "object")]:
        with pytest.raises(BadInput, match=why):
            ars.capture_turn("hermes", "s2", bad)
    with pytest.raises(BadInput, match="session id"):
        ars.capture_turn("hermes", "", {"user": "x"})
