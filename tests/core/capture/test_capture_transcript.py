"""Capture from a Claude Code transcript as it is written (core/capture/transcript.py).

Real files, real SQLite and ledger: after each capture the turn is recallable, and the
episodes are exactly those ``ars ingest`` of the whole file makes (same ids, same
source keys), so the catch-up ingest adds nothing."""

from __future__ import annotations

import json
import os

import pytest

from cc_transcript import Transcript
from core.api import ARS, CaptureDeferred
from core.config import Settings
from core.enrich.extract import source_key
from core.govern.redact import redact_episodes
from core.ingest.formats.claude_code import parse_claude_code
from conftest import TEST_DEADLINES


@pytest.fixture
def ars(state_dir):
    a = ARS(Settings(state_dir=state_dir, embedder="off", **TEST_DEADLINES))
    yield a
    a.close()


def stored_keys(ars: ARS, ids) -> dict:
    return ars.memory.sqlite.source_keys(list(ids))


def full_keys(path) -> dict:
    """What reading the whole file now gives: id -> source key (redacted, as stored)."""
    return {ep.id: source_key(ep) for ep in redact_episodes(parse_claude_code(path).episodes)}


def day_one(t: Transcript) -> None:
    t.turn("写一个 boss_scraper.py 抓取 BOSS 直聘上的产品经理职位，然后运行它",
           [("Write", {"file_path": "/home/lin/work/jobs/boss_scraper.py", "content": "import requests\n..."},
             "File created successfully at: /home/lin/work/jobs/boss_scraper.py"),
            ("Bash", {"command": "python boss_scraper.py --city 北京", "description": "run the scraper"},
             "抓取了 137 个产品经理职位\nsaved to jobs.csv")],
           "脚本已写好并运行：抓取了 137 个产品经理职位，结果在 jobs.csv。")


def test_a_turn_is_recallable_when_the_capture_returns_and_the_catch_up_adds_nothing(ars, tmp_path):
    t = Transcript(tmp_path / "projects" / "-home-lin-work-jobs" / "s1.jsonl")
    day_one(t)
    ids = ars.capture_transcript(t.path)
    assert ids == [f"claude-code:{t.session}:0"]
    hits = ars.recall("抓取了多少个产品经理职位", k=3).hits
    assert hits and hits[0].episode_id == ids[0]
    # the tool call and its result are in the memory: the command and what it printed
    text = ars.memory.sqlite.get(ids[0]).text
    assert "python boss_scraper.py --city 北京" in text and "tool Bash: 抓取了 137 个产品经理职位" in text

    # more turns, each captured as it ends; a gap of 40 minutes starts a new part, as ingest splits it
    t.turn("把 jobs.csv 按薪资排序", [("Bash", {"command": "sort -t, -k3 -n jobs.csv | head"}, "产品经理,北京,35k")],
           "已按薪资排好。", gap=40 * 60)
    assert ars.capture_transcript(t.path) == [f"claude-code:{t.session}:1"]
    t.compact("Summary: the scraper found 137 jobs; sorted by salary.")
    t.turn("继续", [], "好的，继续。")
    ars.capture_transcript(t.path)
    whole = full_keys(t.path)
    assert len(whole) == 3  # the compaction started a third part
    assert stored_keys(ars, whole) == whole  # exactly what ingest of the whole file stores
    before = ars.episode_count()
    report = ars.ingest([t.path], fmt="claude-code")
    assert (report.episodes_added, report.duplicates_skipped) == (0, 3)
    assert ars.episode_count() == before == 3


def test_a_line_still_being_written_waits_and_nothing_new_writes_nothing(ars, tmp_path):
    t = Transcript(tmp_path / "s2.jsonl")
    day_one(t)
    ars.capture_transcript(t.path)
    ledger = (ars.state_dir / "ledger.jsonl").stat().st_size
    assert ars.capture_transcript(t.path) == []  # nothing new: no write at all
    assert (ars.state_dir / "ledger.jsonl").stat().st_size == ledger
    t.partial('{"parentUuid":null,"type":"user","message":{"role":"user","content":"half a li')
    ars.capture_transcript(t.path)
    assert (ars.state_dir / "ledger.jsonl").stat().st_size == ledger  # the half line waits
    with open(t.path, "a") as fh:
        fh.write('ne"},"uuid":"u-half","timestamp":"2026-12-04T12:30:00Z","sessionId":"%s","cwd":"/x"}\n' % t.session)
    ars.capture_transcript(t.path)
    assert "half a line" in ars.recall("half a line", k=1).hits[0].snippet
    assert stored_keys(ars, full_keys(t.path)) == full_keys(t.path)


def test_a_replaced_transcript_is_read_again_from_its_start(ars, tmp_path):
    t = Transcript(tmp_path / "s3.jsonl")
    day_one(t)
    ars.capture_transcript(t.path)
    lines = t.path.read_text().splitlines(keepends=True)
    os.unlink(t.path)
    t.path.write_text("".join(lines[:3]))  # a new file (another inode), shorter
    ars.capture_transcript(t.path)
    assert stored_keys(ars, full_keys(t.path)) == full_keys(t.path)


def test_the_checkpoint_keeps_no_secret_and_a_long_first_read_is_deferred(ars, tmp_path):
    t = Transcript(tmp_path / "s4.jsonl")
    t.turn("deploy with this token", [("Bash", {"command": "export OPENAI_API_KEY=sk-proj-" + "a1B2" * 12},
                                       "ok")], "done")
    ars.capture_transcript(t.path)
    folder = ars.state_dir / "capture"
    saved = "".join(p.read_text() for p in folder.glob("*.json"))
    assert "sk-proj-" not in saved and "[secret:" in saved
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in folder.glob("*.json"))
    other = Transcript(tmp_path / "s5.jsonl")
    day_one(other)
    for _ in range(2):  # no checkpoint is made by a deferred capture: deferred again
        with pytest.raises(CaptureDeferred):
            ars.capture_transcript(other.path, first_read_max=100)
    ars.capture_transcript(other.path)  # read whole (as the background capture does)
    other.turn("and again", [], "again")
    assert ars.capture_transcript(other.path, first_read_max=100) == [f"claude-code:{other.session}:0"]


def test_bad_input_is_one_line(ars, tmp_path):
    from core.api import BadInput

    with pytest.raises(BadInput, match="nothing captured"):
        ars.capture_transcript(tmp_path / "missing.jsonl")
    with pytest.raises(BadInput, match="not a regular file"):
        ars.capture_transcript(tmp_path)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\x00\xff" * 1000 + b"\n" + json.dumps({"type": "user"}).encode() + b"\n")
    assert ars.capture_transcript(binary) == []


def test_a_forgotten_session_is_not_kept_by_its_checkpoint_nor_captured_again(ars, tmp_path):
    t = Transcript(tmp_path / "s6.jsonl")
    day_one(t)
    [eid] = ars.capture_transcript(t.path)
    ars.forget(ars.forget_select(session=t.session), why="private")
    assert not list((ars.state_dir / "capture").glob("*.json"))  # its text does not rest there
    t.turn("one more", [], "sure")
    assert ars.capture_transcript(t.path) == []  # read again from the start: the tombstone keeps it out
    assert ars.memory.sqlite.get(eid) is None and ars.recall("137 个产品经理职位").hits == []
    # a session's handed-over turns: the forgotten part's messages go, the part counter stays
    [tid] = ars.capture_turn("hermes", "h1", {"user": "我的身份证号是 110101199003074578", "assistant": "记住了"})
    ars.forget(ars.forget_select(ids=[tid]), why="private")
    saved = "".join(p.read_text() for p in (ars.state_dir / "capture").glob("*.json"))
    assert "身份证" not in saved
    assert ars.capture_turn("hermes", "h1", {"user": "下一个问题", "assistant": "好", "ts": "2026-12-04T13:00:00Z"}) \
        == ["hermes:h1:1"]


def test_a_turn_handed_over_as_its_transcript(ars, tmp_path):
    """How a hook hands a turn to the recall daemon (its `capture` request): the transcript's path."""
    t = Transcript(tmp_path / "s7.jsonl")
    day_one(t)
    assert ars.capture_turn("claude-code", t.session, {"transcript": str(t.path)}) == [f"claude-code:{t.session}:0"]
    other = Transcript(tmp_path / "s8.jsonl")
    day_one(other)
    with pytest.raises(CaptureDeferred):
        ars.capture_turn("claude-code", other.session, {"transcript": str(other.path), "first_read_max": 100})
