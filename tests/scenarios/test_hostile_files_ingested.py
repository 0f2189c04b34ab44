"""Hostile files: ingestion reads what it should, reports what it cannot in
one line each, and the run goes on.

A FIFO (named pipe) named or found in a folder; a 5,000-digit JSON number;
front matter of 1,200 nested brackets; a file name that is not UTF-8 (and
names and quoted lines that look like console markup); lines built to make a
backtracking regex take minutes; a large transcript (memory stays bounded);
symlinks out of an ingested folder; a NUL byte in one line of a text file.
Every case runs real files through the real ``ars ingest`` (a subprocess,
with a timeout so a hang fails the test) or the core API.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ingest.formats import claude_code, markdown, message_text
from core.ingest.formats import lines as line_reading
from core.ingest.formats import parsed as parse_answer
from core.ingest.parsers import PARSERS, STREAMS, detect_format
from core.ingest.pipeline import ingest
from core.models import Episode

from conftest import env_without_ars, make_memory, write_episodes

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures"
OPENCLAW = FIXTURES / "openclaw" / "agents" / "main" / "sessions" / "5f1c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77.jsonl"
MB = 1024 * 1024


def ars_ingest(*args: str | Path, state: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    """`ars ingest ARGS --state STATE`; a hang is a failure (TimeoutExpired), not a stuck test run."""
    env = env_without_ars()
    env["COLUMNS"] = "500"  # the table and error lines unwrapped, whatever the temporary paths' length
    cmd = [sys.executable, "-m", "tui.cli.main", "ingest", *map(os.fspath, args), "--state", os.fspath(state)]
    return subprocess.run(cmd, capture_output=True, cwd=ROOT, env=env, timeout=timeout)


def as_json(r: subprocess.CompletedProcess) -> dict:
    assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
    return json.loads(r.stdout)


def one_line_errors(report: dict) -> list[tuple[str, int, str]]:
    out = []
    for m in report["malformed"]:
        assert "\n" not in m["file"] and "\n" not in m["error"] and 0 < len(m["error"]) <= 200, m
        out.append((Path(m["file"]).name, m["line"], m["error"]))
    return out


class StillRunning(Exception):
    """Not an OSError (as TimeoutError is), which a reader's ``except OSError`` would swallow."""


@contextmanager
def deadline(seconds: int):
    """Fail (instead of hanging the run) if the block takes longer: a
    blocking open of a FIFO is interrupted by the alarm."""
    def expire(signum, frame):
        raise StillRunning(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# -- 1. a FIFO is not read -----------------------------------------------------------------------------
def test_fifo_named_or_in_a_folder_is_reported_and_the_rest_ingested(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_episodes(folder / "good.jsonl", [{"id": "good-1", "text": "a good episode about rollbacks"}])
    os.mkfifo(folder / "pipe.jsonl")  # no writer: a blocking open or read never returns
    os.mkfifo(tmp_path / "named.jsonl")
    r = ars_ingest(tmp_path / "named.jsonl", folder, "--json", state=tmp_path / "state")
    rep = as_json(r)
    assert r.returncode == 1, r.stderr  # some inputs could not be read, the rest were ingested
    assert rep["episodes_added"] == 1 and rep["failed_files"] == 2
    errors = one_line_errors(rep)
    assert sorted(name for name, _, _ in errors) == ["named.jsonl", "pipe.jsonl"]
    for _, line, error in errors:
        assert line == 0 and error.startswith("not a regular file (a FIFO)")


def test_parsers_and_detection_never_block_on_a_fifo(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with deadline(20):
        assert detect_format(fifo) == "jsonl"
        for parser in PARSERS.values():
            [m] = parser(fifo).malformed
            assert m.line == 0 and m.error.startswith("cannot read: not a regular file (a FIFO)"), m


def test_a_file_swapped_for_a_fifo_after_the_check_is_not_read(tmp_path):
    """The check is made on the opened descriptor, so a path that was a
    regular file when listed and a FIFO when opened is refused, not read."""
    from core.memory.sources import NotRegularFile, open_regular

    path = tmp_path / "s.jsonl"
    write_episodes(path, [{"id": "x", "text": "x"}])
    assert line_reading.file_problem(path) is None
    path.unlink()
    os.mkfifo(path)
    with deadline(20), pytest.raises(NotRegularFile):
        open_regular(path)


# -- 2. a number Python will not read; one bad file never stops the run ---------------------------
def test_a_5000_digit_number_is_one_bad_line(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    huge = "9" * 5000
    (folder / "episodes.jsonl").write_text(
        json.dumps({"id": "e1", "text": "before the huge number"}) + "\n"
        + '{"id": "e2", "text": "huge", "n": ' + huge + "}\n"
        + json.dumps({"id": "e3", "text": "after the huge number"}) + "\n")
    lines = OPENCLAW.read_text().splitlines(keepends=True)
    lines.insert(3, '{"type": "message", "id": "zz", "parentId": null, "timestamp": ' + huge + "}\n")
    (folder / "openclaw.jsonl").write_text("".join(lines))
    # a number Python does read, far too large for a timestamp
    (folder / "chat.jsonl").write_text(
        json.dumps({"role": "user", "content": "a timestamp of 400 digits", "session_id": "s"})[:-1]
        + ', "timestamp": 1' + "0" * 400 + "}\n")
    r = ars_ingest(folder, "--json", state=tmp_path / "state")
    rep = as_json(r)
    assert r.returncode == 0, r.stderr
    errors = one_line_errors(rep)
    assert errors == [
        ("episodes.jsonl", 2, "invalid JSON: a number of 5000 digits (more than Python reads); line skipped"),
        ("openclaw.jsonl", 4, "invalid JSON: a number of 5000 digits (more than Python reads); line skipped"),
    ]
    assert rep["failed_files"] == 0
    assert rep["episodes_added"] == 2 + 3 + 1  # episodes e1, e3; the openclaw session; the chat
    with deadline(20):
        assert detect_format(folder / "openclaw.jsonl") == "openclaw"


def test_more_bad_lines_than_are_listed_are_counted(tmp_path):
    path = tmp_path / "noisy.jsonl"
    path.write_text("[1]\n" * 1500 + json.dumps({"id": "ok", "text": "the one good line"}) + "\n")
    mem = make_memory(tmp_path / "state")
    try:
        report = ingest(mem, [path], fmt="episodes")  # its first lines tell no format
        assert mem.sqlite.has("ok")
    finally:
        mem.close()
    (summary,) = report.per_file
    assert summary.status == "ingested" and summary.malformed == 1500
    assert len(report.malformed) == parse_answer.MAX_LISTED_MALFORMED + 1
    last = report.malformed[-1]
    assert last.line == parse_answer.MAX_LISTED_MALFORMED + 1
    assert last.error.startswith("this line and 499 more malformed lines are not listed")


# -- 3. front matter nested 1,200 deep -------------------------------------------------------------
def test_front_matter_nested_1200_deep_skips_the_key_not_the_run(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "deep.md").write_text("---\ntitle: Deep\ntags: " + "[" * 1200 + "x" + "]" * 1200
                                    + "\n---\n# Rollback plan\nRoll back the deploy at noon.\n")
    (folder / "other.md").write_text("# Other\nStill read.\n")
    r = ars_ingest(folder, "--json", state=tmp_path / "state")
    rep = as_json(r)
    assert r.returncode == 0, r.stderr
    assert one_line_errors(rep) == [
        ("deep.md", 3, "front matter: value of 'tags' has lists nested deeper than 8; key skipped")]
    assert rep["episodes_added"] == 2
    (ep,) = PARSERS["markdown"](folder / "deep.md").episodes
    assert ep.meta["title"] == "Deep" and "Roll back the deploy" in ep.text


def test_shallow_front_matter_lists_still_read(tmp_path):
    f = tmp_path / "n.md"
    f.write_text("---\ntags: [alpha, beta]\n---\n# H\nbody\n")
    (ep,) = PARSERS["markdown"](f).episodes
    assert ep.topics[:2] == ["alpha", "beta"]


# -- 4. names that are not UTF-8, or look like markup ------------------------------------------------
def test_a_file_name_that_is_not_utf8_is_ingested_and_shown_escaped(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    bad = os.path.join(os.fsencode(folder), b"bad\xff.jsonl")
    with open(bad, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"role": "user", "content": "notes from a strangely named file",
                             "timestamp": "2026-01-01T00:00:00Z"}) + "\n[1]\n")
    (folder / "two\nlines.jsonl").write_text(json.dumps({"id": "nl", "text": "a newline in the name"}) + "\n")
    (folder / "m[bold]arkup.md").write_text("---\nnot [/] yaml\n---\n# H\nbody\n")
    state = tmp_path / "state"
    for extra in (["--json"], []):  # JSON, and the table a person reads
        r = ars_ingest(folder, *extra, "--force", state=state)
        assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    rep = as_json(ars_ingest(folder, "--json", "--force", state=state))
    errors = one_line_errors(rep)
    assert ("bad\\xff.jsonl", 2, "expected a JSON object, got list") in errors
    assert ("m[bold]arkup.md", 2, "front matter: expected 'key: value', got 'not [/] yaml'; line skipped") in errors
    text = ars_ingest(folder, "--force", state=state).stdout.decode()
    assert "bad\\xff.jsonl:2" in text and "m[bold]arkup.md:2" in text and "two\\nlines.jsonl" in text
    # stored, findable in every tier that answers here, and unchanged on the next run
    mem = make_memory(state)
    try:
        ids = set(mem.sqlite.ids())
        assert "jsonl:bad\\xff:0" in ids and "nl" in ids
        hit = mem.recall("strangely named", k=3, tiers="files").hits
        assert hit and hit[0].episode_id == "jsonl:bad\\xff:0"
    finally:
        mem.close()
    again = as_json(ars_ingest(folder, "--json", state=state))
    assert again["unchanged_files"] == 3 and again["episodes_added"] == 0


def test_a_lone_surrogate_escape_in_json_text_is_replaced_not_fatal(tmp_path):
    f = tmp_path / "chat.jsonl"
    f.write_text('{"role": "user", "content": "caf\\ud800 and \\ud83d\\ude00", "session_id": "s"}\n'
                 '{"role": "assistant", "content": "ok", "session_id": "s", "\\udc80key": 1}\n')
    rep = as_json(ars_ingest(f, "--json", state=tmp_path / "state"))
    assert rep["episodes_added"] == 1 and rep["malformed"] == []
    (ep,) = PARSERS["jsonl"](f).episodes
    assert "caf\ufffd and \U0001F600" in ep.text  # the lone one replaced, the pair kept


# -- 5. patterns that backtracked: linear now ----------------------------------------------------------
def test_pathological_lines_are_read_in_seconds(tmp_path):
    """Each of these took from 15 s to hours with the old patterns (a heading
    of 2,000 spaces: 16 s; 80,000 characters of ``[[a:``: 134 s); together,
    well under the timeout now."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "heading.md").write_text("".join(f"# a{' ' * 3000}b{i}\ntext {i}\n" for i in range(4))
                                       + "- **Source**:" + " " * 20000 + "x\n")
    content = ["[[a:" * 100_000, "<relevant-memories>" * 20_000, "<system-reminder>x" * 20_000,
               "x (untrusted):\n```a\n" * 20_000, "[[reply_to_current]] kept text"]
    write_episodes(folder / "chat.jsonl", [{"role": "user", "content": c, "session_id": f"s{i}"}
                                           for i, c in enumerate(content)])
    cc = {"type": "user", "sessionId": "cc", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
          "message": {"role": "user", "content": "<command-name>/x</command-name>" + "<a>" * 100_000}}
    write_episodes(folder / "claude.jsonl", [cc])
    r = ars_ingest(folder, "--json", state=tmp_path / "state", timeout=90)
    rep = as_json(r)
    assert r.returncode == 0 and rep["failed_files"] == 0, rep
    (first, *_) = PARSERS["markdown"](folder / "heading.md").episodes
    assert first.meta["heading"] == "a" + " " * 3000 + "b0"
    eps = {e.session_id: e for e in PARSERS["jsonl"](folder / "chat.jsonl").episodes}
    assert eps["s4"].text == "user: kept text"


OLD_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
OLD_TAG_RE = re.compile(r"<([a-z][\w-]*)>(.*?)</\1>", re.S)
OLD_REPLY_TAG_RE = re.compile(r"\[\[\s*[a-z_]+(?:\s*:[^\]]*)?\s*\]\]")
OLD_METADATA_BLOCK_RE = re.compile(
    r"^[^\n]{0,80}\(untrusted[^)\n]*\):[ \t]*\n```[a-z]*[ \t]*\n(.*?)\n```[ \t]*(?:\n|$)", re.S | re.M)
OLD_BULLET_FIELD_RE = re.compile(r"^\s*-\s*\*\*(Session Key|Session ID|Source)\*\*:\s*(.+?)\s*$", re.M)

_bits = st.lists(st.sampled_from(["#", " ", "\t", "a", "b", "##", "\n", "<a>", "</a>", "<b>", "</b>", "x", "[[",
                                  "]]", "reply_to", ":", "]", "(untrusted meta):", "```", "```json", "{}", "\n```",
                                  "<relevant-memories>", "</relevant-memories>", "- **Source**:", "src"]),
                 max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(_bits)
def test_the_linear_readers_agree_with_the_patterns_they_replace(text):
    line = text.split("\n")[0]
    m = OLD_HEADING_RE.match(line)
    assert markdown.heading(line) == ((len(m.group(1)), m.group(2)) if m else None)
    assert claude_code._tags(text) == {m.group(1): m.group(2).strip() for m in OLD_TAG_RE.finditer(text)}
    assert message_text._REPLY_TAG_RE.sub("", text) == OLD_REPLY_TAG_RE.sub("", text)
    assert message_text._drop_blocks(text, "<relevant-memories>", "</relevant-memories>") == \
        re.sub(r"<relevant-memories>.*?</relevant-memories>\s*", "", text, flags=re.S)
    assert message_text._drop_metadata_blocks(text, None) == OLD_METADATA_BLOCK_RE.sub("", text)
    # the old bullet pattern's \s also spanned lines: compared line by line, where it did not
    old = [(k, v) for ln in text.split("\n") for k, v in OLD_BULLET_FIELD_RE.findall(ln) if v.strip()]
    assert markdown._BULLET_FIELD_RE.findall(text) == old


# -- 6. memory does not grow with the file -------------------------------------------------------------
def _openclaw_transcript(path: Path, messages: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "session", "version": 3, "id": "big", "cwd": "/w",
                             "timestamp": "2026-01-01T00:00:00Z"}) + "\n")
        for i in range(messages):
            role = "user" if i % 2 == 0 else "assistant"
            text = f"message {i} about deploys, rollbacks and the weekly plan " + "lorem ipsum dolor " * 30
            fh.write(json.dumps({"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}",
                                 "timestamp": f"2026-01-01T{(i // 60) % 24:02d}:{i % 60:02d}:00Z",
                                 "message": {"role": role, "content": [{"type": "text", "text": text}]}}) + "\n")
        fh.write(json.dumps({"type": "session_info", "name": "The big session"}) + "\n")


def _peak_mb_of_stream(path: Path) -> tuple[float, list[str], list[str]]:
    parsed = parse_answer.Parsed()
    ids, titles = [], []
    tracemalloc.start()
    try:
        for ep in STREAMS["openclaw"](path, parsed):
            ids.append(ep.id)
            titles.append(ep.meta.get("title"))
        peak = tracemalloc.get_traced_memory()[1] / MB
    finally:
        tracemalloc.stop()
    return peak, ids, titles


def test_a_large_transcript_streams_in_bounded_memory(tmp_path):
    path = tmp_path / "large.jsonl"
    _openclaw_transcript(path, 4_000)  # 3 MB, one session
    assert path.stat().st_size > 2.5 * MB
    peak, ids, titles = _peak_mb_of_stream(path)
    # holding the file's messages and episodes, as the parsers did, peaks at
    # 11 MB here (and at about 3.7 times the file's size in general)
    assert peak < 3, f"peak {peak:.1f} MB"
    # the title named on the last line still reaches every episode (parked parts are rebuilt with it)
    assert len(ids) > 400 and set(titles) == {"The big session"}
    assert ids == [f"openclaw:big:{i}" for i in range(len(ids))]


def test_many_interleaved_sessions_keep_their_order_and_messages(tmp_path):
    """More sessions than stay in memory (the rest are parked on disk and read back)."""
    path = tmp_path / "chat.jsonl"
    rows = [{"role": "user", "content": f"session {s} message {m}", "session_id": f"s{s}"}
            for m in range(3) for s in range(1500)]
    write_episodes(path, rows)
    parsed = PARSERS["jsonl"](path)
    assert [e.session_id for e in parsed.episodes] == [f"s{s}" for s in range(1500)]
    assert all(e.text == "\n".join(f"user: session {e.session_id[1:]} message {m}" for m in range(3))
               for e in parsed.episodes)
    assert parsed.malformed == []


# -- 7. symlinks out of an ingested folder ------------------------------------------------------------
def test_a_folder_walk_does_not_follow_symlinks_out_of_the_folder(tmp_path):
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    secret = write_episodes(outside / "secret.jsonl", [{"id": "secret", "text": "zebracorn private words"}])
    write_episodes(outside / "dir" / "also.jsonl", [{"id": "also", "text": "zebracorn in a linked folder"}])
    folder = tmp_path / "sessions"
    (folder / "sub").mkdir(parents=True)
    write_episodes(folder / "own.jsonl", [{"id": "own", "text": "an episode the folder holds"}])
    (folder / "shadow.jsonl").symlink_to(secret)
    (folder / "linked").symlink_to(outside / "dir")
    (folder / "sub" / "inside.jsonl").symlink_to(folder / "own.jsonl")  # stays inside: read once
    (folder / "sub" / "loop").symlink_to(folder)  # inside, a loop: not walked twice
    (folder / "gone.jsonl").symlink_to(folder / "missing.jsonl")  # broken, inside
    state = tmp_path / "state"
    r = ars_ingest(folder, "--json", state=state)
    rep = as_json(r)
    assert r.returncode == 0, r.stderr
    assert sorted(one_line_errors(rep)) == [
        ("gone.jsonl", 0, "broken symlink: its target does not exist; skipped"),
        ("linked", 0, "symlink leaves the folder: skipped (name the target itself to ingest it)"),
        ("shadow.jsonl", 0, "symlink leaves the folder: skipped (name the target itself to ingest it)"),
    ]
    assert rep["files"] == 1 and rep["episodes_added"] == 1 and rep["skipped_files"] == 3
    mem = make_memory(state)
    try:
        assert mem.sqlite.ids() == ["own"]
        assert mem.recall("zebracorn", k=5, tiers="sqlite,files").hits == []
    finally:
        mem.close()
    # named on the command line, the link is the user's choice: followed
    named = as_json(ars_ingest(folder / "shadow.jsonl", "--json", state=state))
    assert named["episodes_added"] == 1 and named["malformed"] == []


def test_a_watcher_holds_changed_files_to_the_folder_rule(tmp_path):
    secret = write_episodes(tmp_path / "secret.jsonl", [{"id": "secret", "text": "private"}])
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "new.jsonl").symlink_to(secret)
    mem = make_memory(tmp_path / "state")
    try:
        report = ingest(mem, [folder / "new.jsonl"], roots=[folder])
        assert not mem.sqlite.has("secret")
    finally:
        mem.close()
    assert report.skipped_files == 1 and report.malformed[0].error.startswith("symlink leaves the folder")


# -- 8. a NUL byte is one line's problem -------------------------------------------------------------
def test_one_nul_byte_costs_its_line_not_the_file(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "episodes.jsonl").write_bytes(
        b'{"id": "n1", "text": "first"}\n{"id": "n2", "text": "a\x00b"}\n{"id": "n3", "text": "third"}\n')
    (folder / "notes.md").write_bytes(b"# Notes\nfirst line\nbad \x00 line\nlast line\n")
    rep = as_json(ars_ingest(folder, "--json", state=tmp_path / "state"))
    assert sorted(one_line_errors(rep)) == [
        ("episodes.jsonl", 2, "NUL byte at column 24: binary data in a text line; line skipped"),
        ("notes.md", 3, "NUL byte at column 5: binary data in a text line; line read as blank"),
    ]
    assert rep["episodes_added"] == 3 and rep["failed_files"] == 0
    (ep,) = PARSERS["markdown"](folder / "notes.md").episodes
    assert "first line" in ep.text and "last line" in ep.text


def test_a_binary_or_utf16_file_is_still_one_file_level_error(tmp_path):
    png = tmp_path / "photo.jsonl"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    utf16 = tmp_path / "notes.md"
    utf16.write_bytes("# Notes\nwritten by a Windows editor\n".encode("utf-16"))
    rep = as_json(ars_ingest(png, utf16, "--json", state=tmp_path / "state"))
    assert sorted(one_line_errors(rep)) == [
        ("notes.md", 0, "UTF-16 text: only UTF-8 is read; convert it (iconv -f UTF-16 -t UTF-8) and ingest the copy"),
        ("photo.jsonl", 0, "binary file (NUL bytes): not a text transcript"),
    ]


# -- exit codes ------------------------------------------------------------------------------------------
def test_exit_codes(tmp_path):
    good = write_episodes(tmp_path / "good.jsonl", [{"id": "g", "text": "good"}])
    os.mkfifo(tmp_path / "pipe.jsonl")
    state = tmp_path / "state"
    assert ars_ingest(good, state=state).returncode == 0
    assert ars_ingest(good, tmp_path / "pipe.jsonl", "--force", state=state).returncode == 1
    r = ars_ingest(tmp_path / "pipe.jsonl", state=state)
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1, r.stderr  # nothing could be read
    r = ars_ingest(good, "--format", "nope", state=state)
    assert r.returncode == 2 and b"unknown format" in r.stderr
