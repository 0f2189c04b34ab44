"""Checkpoint files: safe names for any goal id (CJK kept; hostile ids stay
inside checkpoints/), atomic latest state, append-only history that rolls the
checkpoint forward, retention that bounds the history, and corrupted files
reported by name while the others load."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.loop.checkpoint_names import GOAL_NAME_BYTES, safe_name
from core.loop.checkpoints import CheckpointStore, CorruptCheckpoint
from core.errors import BadQuery

from loophelp import ars, engine, goal

HOSTILE = ["../../etc/passwd", "a/b", "a\x00b", "x" * 300, "CON", "con.txt", "NUL", "com1", "LPT9.log", "..", ".",
           "", "-rf", "a\\b", "a:b*c?", "..\\..\\windows", "\n\r\t", "产品调研", "产品/调研", "中" * 200,
           "emoji 🚀 launch", "a%2Fb", "a~b", "trailing.", "～全角／斜杠"]


def _component_ok(name: str) -> None:
    assert name and "/" not in name and "\x00" not in name and "\\" not in name
    assert name not in (".", "..") and not name.startswith(".") and not name.endswith(".")
    assert len(name.encode("utf-8")) <= GOAL_NAME_BYTES
    assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)),
                                              *(f"LPT{i}" for i in range(10))}
    assert all(c.isprintable() for c in name)


def test_safe_names_for_hostile_ids():
    names = [safe_name(h) for h in HOSTILE]
    for n in names:
        _component_ok(n)
    assert len(set(names)) == len(HOSTILE)  # distinct ids never share a file
    assert safe_name("产品调研") == "产品调研"  # CJK kept as is
    assert safe_name("产品/调研") == "产品%2F调研"
    assert safe_name("../../etc/passwd") == "%2E%2E%2F.%2E%2Fetc%2Fpasswd"  # no "..", no "/"
    assert safe_name("CON") == "%43ON" and safe_name("a\x00b") == "a%00b"
    long = safe_name("x" * 300)
    assert long.startswith("x" * 100) and "~" in long and len(long) == GOAL_NAME_BYTES
    assert safe_name("中" * 200) != safe_name("中" * 201)  # the hash suffix tells long ids apart


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=400))
def test_any_goal_id_is_one_safe_component(raw):
    _component_ok(safe_name(raw))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_distinct_short_ids_get_distinct_names(a, b):
    if a != b:
        assert safe_name(a) != safe_name(b)


def test_hostile_goal_ids_stay_inside_checkpoints(tmp_path, memory, state_dir):
    eng = engine(state_dir, memory)
    outside_before = {p for p in tmp_path.rglob("*") if state_dir not in p.parents and p != state_dir}
    ids = {}
    for gid in HOSTILE:
        g = goal([{"action": "check", "outcome": "pass"}], goal_id=gid) if gid.strip() else \
            goal([{"action": "check", "outcome": "pass"}])
        s = eng.run(eng.create(g).loop_id)
        assert s.status == "done"
        ids[s.loop_id] = s.goal_id
    cp = (state_dir / "checkpoints").resolve()
    files = [p for p in cp.iterdir() if not p.name.startswith(".")]
    assert len(files) == 2 * len(HOSTILE)  # one checkpoint and one history each, nothing else
    for p in files:
        assert p.resolve().parent == cp
    outside_after = {p for p in tmp_path.rglob("*") if state_dir not in p.parents and p != state_dir}
    assert outside_after == outside_before  # nothing written anywhere else
    assert not Path("/etc/passwd.json").exists()
    assert any(p.name.startswith("产品调研__") for p in files)
    # every loop loads back by its id with its goal id intact
    for loop_id, gid in ids.items():
        assert eng.store.load(loop_id).state.goal_id == gid


def test_corrupted_checkpoint_is_reported_by_name_and_the_others_load(state_dir, memory):
    eng = engine(state_dir, memory)
    good = eng.run(eng.create(goal([{"action": "a", "outcome": "pass"}], goal_id="good-one")).loop_id)
    bad = eng.run(eng.create(goal([{"action": "b", "outcome": "pass"}], goal_id="bad-one")).loop_id)
    cp, hist = eng.store.latest_path(bad), eng.store.history_path(bad)
    cp.write_text('{"loop_id": "half a fi', encoding="utf-8")
    hist.unlink()  # nothing to rebuild from
    listing = eng.store.list()
    assert [s.loop_id for s in listing.states] == [good.loop_id]
    assert len(listing.problems) == 1 and listing.problems[0].file == cp.name
    with pytest.raises(CorruptCheckpoint, match=cp.name):
        eng.store.load(bad.loop_id)
    # the same through the command line
    r = ars("loop", "list", "--json", state=state_dir)
    assert r.returncode == 0 and [s["loop_id"] for s in json.loads(r.stdout)] == [good.loop_id]
    assert cp.name in r.stderr and "corrupt" in r.stderr
    r = ars("loop", "show", bad.loop_id, state=state_dir)
    assert r.returncode == 1 and cp.name in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bases_come_newest_written_first_and_list_reads_only_those_given(state_dir, memory):
    eng = engine(state_dir, memory)
    ids = [eng.run(eng.create(goal([{"action": "a", "outcome": "pass"}], goal_id=f"g{i}")).loop_id).loop_id
           for i in range(3)]
    paths = {i: eng.store.latest_path(eng.store.load(i).state) for i in ids}
    base_of = {i: paths[i].name[: -len(".json")] for i in ids}
    # written in the order 1, 2, 0 (by file time, not by name or by what the states say)
    for n, i in enumerate((ids[1], ids[2], ids[0])):
        for f in (paths[i], paths[i].with_name(base_of[i] + ".history.jsonl")):
            os.utime(f, ns=(1_000_000_000 * (n + 1),) * 2)
    (eng.store.dir / "notes.txt").write_text("not a loop")
    assert eng.store.bases() == [base_of[ids[0]], base_of[ids[2]], base_of[ids[1]]]
    head = eng.store.list(eng.store.bases()[:2])
    assert {s.loop_id for s in head.states} == {ids[0], ids[2]} and not head.problems
    assert {s.loop_id for s in eng.store.list().states} == set(ids)
    assert eng.store.list([]).states == []
    assert CheckpointStore(state_dir / "nowhere").bases() == []


def test_corrupted_checkpoint_with_history_is_rebuilt_and_said_so(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal([{"action": "restart nginx", "tool": "shell", "args": {"cmd": "true"}}])).loop_id)
    assert s.status == "waiting_human"
    cp = eng.store.latest_path(s)
    cp.write_bytes(b"\x00\x00garbage")
    loaded = eng.store.load(s.loop_id)
    assert loaded.recovered
    # the history snapshot is the state minus the ledger offset written after it
    assert loaded.state.model_dump(exclude={"ledger_mark"}) == s.model_dump(exclude={"ledger_mark"})
    assert "corrupt" in loaded.warnings[0] and cp.name in loaded.warnings[0]
    assert eng.store.list().problems[0].file == cp.name  # still reported
    from core.loop.decisions import decide

    decide(state_dir, s.loop_id, "approve")
    assert eng.run(s.loop_id).status == "done"  # and the loop carries on


def test_checkpoint_behind_its_history_rolls_forward(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal([{"action": "x", "tool": "shell", "args": {"cmd": "true"}}])).loop_id)
    entries, _ = eng.store.history(s.loop_id)
    older = entries[-2].state
    eng.store.save(older)  # as if the process died after the history append
    loaded = eng.store.load(s.loop_id)
    assert loaded.recovered and loaded.state.seq == s.seq and "rolled forward" in loaded.warnings[0]


def test_torn_history_line_is_ignored(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal([{"action": "x", "tool": "shell", "args": {"cmd": "true"}}])).loop_id)
    hist = eng.store.history_path(s)
    with open(hist, "ab") as fh:
        fh.write(b'{"index": 99, "kind": "st')  # a crash mid-append
    entries, problems = eng.store.history(s.loop_id)
    assert entries[-1].index == s.seq and "torn" in problems[0].error
    assert eng.store.load(s.loop_id).state.seq == s.seq


def test_no_temp_files_are_left_behind(state_dir, memory):
    eng = engine(state_dir, memory)
    eng.run(eng.create(goal([{"action": "a", "outcome": "pass"}] * 3)).loop_id)
    leftovers = [p for p in (state_dir / "checkpoints").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_retention_bounds_history_and_keeps_every_status_change(state_dir, memory):
    store = CheckpointStore(state_dir, keep_last=12, compact_every=6)
    eng = engine(state_dir, memory, store=store)
    script = [{"action": f"poll {i}", "outcome": "unknown"} for i in range(40)]
    script[10] = {"action": "rotate the key", "tool": "shell", "args": {"cmd": "true"}}
    s = eng.run(eng.create(goal(script, budget={"max_iterations": 30, "max_consecutive_failures": 5})).loop_id)
    assert s.status == "waiting_human"
    from core.loop.decisions import decide

    decide(state_dir, s.loop_id, "approve")
    s = eng.run(s.loop_id)
    assert s.status == "aborted" and s.seq > 170  # 30 iterations of 6 steps, plus the status changes
    entries, _ = store.history(s.loop_id)
    lines = sum(1 for _ in open(store.history_path(s), "rb"))
    assert lines == len(entries) <= 12 + 6 + 10
    idx = [e.index for e in entries]
    assert idx[0] == 1 and idx[-12:] == list(range(s.seq - 11, s.seq + 1))  # first, and the last N
    changes = [e for e in entries if e.status_changed]
    assert [(e.from_status, e.to_status) for e in changes] == [
        (None, "initialized"), ("initialized", "active"), ("active", "waiting_human"), ("waiting_human", "active"),
        ("active", "aborted")]
    # every entry still in the file is a complete state to replay or fork from
    dropped = next(i for i in range(2, s.seq) if i not in idx)
    with pytest.raises(BadQuery, match=f"has no history entry {dropped}.*retention"):
        eng.fork(s.loop_id, dropped)
    kept = next(e for e in entries if e.to_status == "waiting_human")
    assert eng.fork(s.loop_id, kept.index).status == "waiting_human"


def test_default_retention_keeps_a_short_loop_whole(state_dir, memory):
    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal([{"action": "a", "outcome": "pass"}] * 8,
                                budget={"max_iterations": 8})).loop_id)
    entries, _ = eng.store.history(s.loop_id)
    assert [e.index for e in entries] == list(range(1, s.seq + 1))
    assert os.path.getsize(eng.store.history_path(s)) > 0


def test_listing_reads_the_newest_history_index_without_parsing_the_entry(state_dir, memory):
    """A loop is listed from its checkpoint when the history's last line is no newer: the last
    line's index is read from its prefix. A newer line that turns out invalid does not win."""
    from core.loop.history_file import last_index

    eng = engine(state_dir, memory)
    s = eng.run(eng.create(goal([{"action": "x", "tool": "shell", "args": {"cmd": "true"}}])).loop_id)
    hist = eng.store.history_path(s)
    assert last_index(hist) == s.seq
    with open(hist, "ab") as fh:
        fh.write(b'{"index":' + str(s.seq + 1).encode() + b',"texT":"not an entry"}\n')  # newer, but invalid
    assert last_index(hist) == s.seq + 1
    loaded = eng.store.load(s.loop_id)
    assert not loaded.recovered and loaded.state.seq == s.seq  # parsed, found invalid, the checkpoint stands
    with open(hist, "ab") as fh:
        fh.write(b'{"kind": "step"}\n')  # not a line the store wrote: no index read, the entries are parsed
    assert last_index(hist) is None
    assert eng.store.load(s.loop_id).state.seq == s.seq
    assert [st.loop_id for st in eng.store.list().states] == [s.loop_id]
