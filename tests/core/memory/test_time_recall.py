"""Time as a dimension of recall (issue 33): the times a query names resolve against
when it is asked, in the asker's zone, and weigh when a memory happened; they are
no longer matched as words. Real SQLite stores, dateparser as installed."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.config import Settings
from core.ingest.pipeline import ingest
from core.memory.memory import Memory
from core.memory.query import prepare_query
from core.memory.time_window import windows

ROOT = Path(__file__).resolve().parents[3]
SHANGHAI = timezone(timedelta(hours=8))
NOW = datetime(2026, 12, 5, 10, 0, tzinfo=SHANGHAI)  # a Saturday


@pytest.mark.parametrize("query, phrase, period, start, end", [
    ("昨天的部署怎么样了", "昨天", "day", "2026-12-04", "2026-12-05"),
    ("前天让你做了一个系统大升级", "前天", "day", "2026-12-03", "2026-12-04"),
    ("三天前的测试", "3天前", "day", "2026-12-02", "2026-12-03"),
    ("上周跑的迁移", "上周", "week", "2026-11-23", "2026-11-30"),
    ("两周前", "2周前", "week", "2026-11-16", "2026-11-23"),
    ("五月的账单", "五月", "month", "2026-05-01", "2026-06-01"),
    ("三个月前", "3个月前", "month", "2026-09-01", "2026-10-01"),
    ("去年的计划", "去年", "year", "2025-01-01", "2026-01-01"),
    ("how did yesterday's deploy go", "yesterday", "day", "2026-12-04", "2026-12-05"),
    ("what did I run last Tuesday", "last Tuesday", "day", "2026-12-01", "2026-12-02"),
    ("the migration 3 days ago", "3 days ago", "day", "2026-12-02", "2026-12-03"),
    ("what did we do last week", "last week", "week", "2026-11-23", "2026-11-30"),
    ("the invoice in May", "in May", "month", "2026-05-01", "2026-06-01"),
    ("what happened in May 2023", "in May 2023", "month", "2023-05-01", "2023-06-01"),
])
def test_times_in_chinese_and_english_resolve_to_windows_in_the_askers_zone(query, phrase, period, start, end):
    (w,) = windows(query, NOW)
    assert (w.phrase, w.period) == (phrase, period)
    assert (w.start.date().isoformat(), w.end.date().isoformat()) == (start, end)
    assert w.start.utcoffset() == timedelta(hours=8)  # midnight where the asker is, not UTC's


@pytest.mark.parametrize("query", ["what does the user prefer", "neo4j outage on the staging host",
                                   "我们讨论过向量数据库的预算", "When did Caroline go to the support group?"])
def test_a_query_without_a_time_has_no_window(query):
    assert windows(query, NOW) == []


def test_a_query_without_a_time_word_never_loads_the_parser():
    # every agent hook is a fresh process: the parser (~0.2 s) loads only for a query that names a time
    code = ("import sys; from datetime import datetime; from core.memory.time_window import windows; "
            "windows('what does the user prefer about vector stores', datetime.now().astimezone()); "
            "print('dateparser' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_time_becomes_a_window_and_stays_a_word():
    q = prepare_query("前天让你做了一个系统大升级", NOW)
    assert [w.phrase for w in q.windows] == ["前天"]
    assert "前天" in q.tokens and "升级" in q.tokens  # a turn may say "前天" itself
    assert prepare_query("前天让你做了一个系统大升级").windows == []  # no moment given: no window


def test_a_dialogue_asks_in_its_last_line():
    # "今天" two lines up was said at that line's moment, not this question's
    q = prepare_query("<A>: 今天我画了一只小狗\n<B>: 真好看\n<A>: 我该怎么庆祝一下呢？", NOW)
    assert q.windows == []
    q = prepare_query("<A>: 我画了一只小狗\n<A>: 昨天那张画你还记得吗？", NOW)
    assert [w.phrase for w in q.windows] == ["昨天"]


def _memory(tmp_path: Path, episodes: list[dict]) -> Memory:
    src = tmp_path / "episodes.jsonl"
    src.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in episodes), encoding="utf-8")
    mem = Memory(Settings(state_dir=tmp_path / "state", embedder="off"))
    ingest(mem, [src], fmt="episodes")
    return mem


def _ep(eid: str, text: str, when: datetime) -> dict:
    return {"id": eid, "text": text, "source": "jsonl", "first_ts": when.isoformat()}


def test_the_memory_of_the_day_named_ranks_first_with_its_time_component(tmp_path):
    mem = _memory(tmp_path, [
        _ep("upgrade", "user: 帮我做一次系统升级\nassistant: 升级完成，更新了 42 个软件包", NOW - timedelta(days=2)),
        _ep("older", "user: 系统大升级失败了怎么办，系统升级要回滚吗\nassistant: 回滚了系统升级", NOW - timedelta(days=9)),
        _ep("chatter", "user: 今天天气怎么样\nassistant: 晴", NOW - timedelta(days=2, hours=1)),
    ])
    try:
        plain = mem.recall("系统大升级结果怎么样", k=3, now=NOW)
        assert plain.hits[0].episode_id == "older"  # by words alone the older one matches better
        timed = mem.recall("前天让你做了一个系统大升级，结果怎么样", k=3, now=NOW)
        ranked = [h.episode_id for h in timed.hits]
        assert ranked[0] == "upgrade", ranked
        assert timed.hits[0].breakdown["time"] > 0 and "time" not in timed.hits[ranked.index("older")].breakdown
        assert timed.times == ["前天 = 2026-12-03 (+08:00)"]
        assert timed.hits[0].per_tier["sqlite"].breakdown["time"] > 0  # each tier's own score shows it too
        # that day's chatter comes in as a candidate (it shares no word) but below the answer
        assert "chatter" in ranked and ranked.index("chatter") > 0
    finally:
        mem.close()


def test_a_month_weighs_in_each_tier_but_not_over_the_fusion(tmp_path):
    # "in May" is often when the thing happened, told in a later session: a named month
    # counts in each tier's score, and only a named day adds the fused time component
    mem = _memory(tmp_path, [
        _ep("may", "assistant: reviewed the billing dashboard layout", datetime(2026, 5, 12, 9, tzinfo=SHANGHAI)),
        _ep("june", "assistant: the billing dashboard migration we started in May is done",
            datetime(2026, 6, 2, 9, tzinfo=SHANGHAI)),
    ])
    try:
        r = mem.recall("the billing dashboard migration in May", k=2, now=NOW)
        may = next(h for h in r.hits if h.episode_id == "may")
        assert may.per_tier["sqlite"].breakdown["time"] > 0 and "time" not in may.breakdown
        assert r.hits[0].episode_id == "june"  # the words still decide
        assert r.times == ["in May = 2026-05-01 to 2026-05-31 (+08:00)"]
    finally:
        mem.close()


def test_yesterday_is_the_askers_yesterday(tmp_path):
    # 23:30 UTC on the 3rd is 07:30 on the 4th in Shanghai: "yesterday" asked there on the 5th
    late = datetime(2026, 12, 3, 23, 30, tzinfo=timezone.utc)
    mem = _memory(tmp_path, [_ep("deploy", "assistant: deployed the billing service", late),
                             _ep("deploy-old", "assistant: deployed the billing service again", late - timedelta(days=3))])
    try:
        here = mem.recall("yesterday's deploy of the billing service", k=2, now=NOW)
        assert here.hits[0].episode_id == "deploy" and "time" in here.hits[0].breakdown
        utc = mem.recall("yesterday's deploy of the billing service", k=2, now=NOW.astimezone(timezone.utc))
        assert all("time" not in h.breakdown for h in utc.hits)  # in UTC the 4th holds neither
    finally:
        mem.close()


def test_the_recall_says_which_times_it_read(tmp_path):
    mem = _memory(tmp_path, [_ep("a", "assistant: deployed the billing service", NOW - timedelta(days=1))])
    try:
        assert mem.recall("yesterday's deploy", k=1, now=NOW).times == ["yesterday = 2026-12-04 (+08:00)"]
        assert mem.recall("上周的部署", k=1, now=NOW).times == ["上周 = 2026-11-23 to 2026-11-29 (+08:00)"]
        assert mem.recall("the deploy", k=1, now=NOW).times == []
    finally:
        mem.close()


def test_a_question_that_is_only_a_time_gets_that_times_memories(tmp_path):
    mem = _memory(tmp_path, [_ep("upgrade", "assistant: 升级完成，更新了 42 个软件包", NOW - timedelta(days=2)),
                             _ep("old", "assistant: 回滚了系统升级", NOW - timedelta(days=9))])
    try:
        r = mem.recall("前天呢？", k=2, now=NOW)  # no word in common with any memory
        assert [h.episode_id for h in r.hits] == ["upgrade"] and r.times == ["前天 = 2026-12-03 (+08:00)"]
    finally:
        mem.close()


def test_a_long_prompt_full_of_times_reads_only_its_end_and_labels_stay_short():
    long = "yesterday we met. " + "then the logs said the same thing again. " * 100 + "what did I run last Tuesday"
    (w,) = windows(long, NOW)  # its end, where it asks: the yesterday 4,000 characters before is not read
    assert (w.phrase, w.period) == ("last Tuesday", "day")
    (many,) = windows("昨天 " * 200, NOW)
    assert len(many.label()) < 80 and many.label().endswith("= 2026-12-04 (+08:00)")
