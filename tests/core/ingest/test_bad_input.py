"""Bad input: each case yields a one-line error naming the file and the line,
and everything else in the file (and in the batch) is still ingested.

Truncated JSON, invalid UTF-8, a binary file, a 50 MB single line, an empty
file, a JSONL line that is valid JSON but not an object, Markdown with broken
front matter; plus an unreadable path. Parsers never raise for content."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest

from core.ingest.formats.hermes import MAX_LINE_BYTES_HERMES
from core.ingest.formats.lines import MAX_LINE_BYTES
from core.ingest.parsers import PARSERS, detect_format

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).parents[2] / "fixtures"
OPENCLAW = FIXTURES / "openclaw" / "agents" / "main" / "sessions" / "5f1c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77.jsonl"
HERMES = FIXTURES / "hermes" / "sessions-export.jsonl"
CLAUDE = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code"
CC_READ = CLAUDE / "fixture-read-tool-variants.jsonl"
MB = 1024 * 1024


def parse(path: Path):
    return PARSERS[detect_format(path)](path)


def errors(parsed) -> list[tuple[int, str]]:
    return [(m.line, m.error) for m in parsed.malformed]


def assert_one_line(parsed, path: Path) -> None:
    for m in parsed.malformed:
        assert m.file == str(path)
        assert "\n" not in m.error and 0 < len(m.error) <= 200, m.error


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# -- truncated JSON ---------------------------------------------------------------------
def test_truncated_json_line_in_openclaw(tmp_path):
    lines = lines_of(OPENCLAW)
    f = tmp_path / "s.jsonl"
    lines[6] = lines[6][:40] + b"\n"  # line 7 cut mid-object
    f.write_bytes(b"".join(lines))
    p = parse(f)
    assert detect_format(f) == "openclaw"
    [(line, err)] = errors(p)
    assert line == 7 and err.startswith("invalid JSON: ")
    assert_one_line(p, f)
    assert len(p.episodes) == 3  # the rest of the session is there
    assert "Looking at the backup log now." in p.episodes[0].text


def test_truncated_last_line_of_a_real_claude_code_transcript(tmp_path):
    if not CC_READ.exists():
        pytest.skip("real transcripts not found")
    f = tmp_path / "cc.jsonl"
    data = CC_READ.read_bytes().rstrip(b"\n")
    f.write_bytes(data[: len(data) - 200])  # a crash mid-write: last line torn, no newline
    p = parse(f)
    n = len(data.splitlines())
    assert errors(p)[0][0] == n and errors(p)[0][1].startswith("invalid JSON")
    assert len(p.malformed) == 1
    assert p.episodes and "Please perform the following file read operations" in p.episodes[0].text


# -- invalid UTF-8 --------------------------------------------------------------------------
def test_invalid_utf8_line(tmp_path):
    lines = lines_of(HERMES)
    f = tmp_path / "h.jsonl"
    f.write_bytes(lines[0] + b'{"id": "x", "messages": [{"role": "user", "content": "caf\xe9 \xff"}]}\n' + lines[1])
    p = parse(f)
    [(line, err)] = errors(p)
    assert line == 2 and err.startswith("invalid UTF-8 at byte ")
    assert [e.session_id for e in p.episodes] == ["20260310_141502_a1b2c3", "20260311_090000_d4e5f6"]


def test_invalid_utf8_in_markdown_is_reported_and_the_rest_read(tmp_path):
    f = tmp_path / "notes.md"
    f.write_bytes(b"# Notes\nfirst good line\nbad \xff\xfe line\nlast good line\n")
    p = parse(f)
    [(line, err)] = errors(p)
    assert line == 3 and err.startswith("invalid UTF-8 at byte 4")
    (ep,) = p.episodes
    assert "first good line" in ep.text and "last good line" in ep.text


# -- binary file ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["photo.jsonl", "photo.md", "photo.png"])
def test_binary_file_is_one_line_zero_error(tmp_path, name):
    f = tmp_path / name
    f.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    fmt = detect_format(f)
    p = PARSERS[fmt](f)
    assert errors(p) == [(0, "binary file (NUL bytes): not a text transcript")]
    assert p.episodes == [] and p.spans == []
    # whatever format is forced, the answer is the same, never an exception
    for parser in PARSERS.values():
        assert errors(parser(f)) == [(0, "binary file (NUL bytes): not a text transcript")]


# -- a 50 MB single line ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def huge_line_file(tmp_path_factory) -> Path:
    """good line, a 50 MB line (a Claude Code tool result), good line."""
    d = tmp_path_factory.mktemp("huge")
    f = d / "huge.jsonl"
    base = {"sessionId": "big", "cwd": "/w", "version": "2", "isSidechain": False}
    first = {**base, "type": "user", "uuid": "u1", "timestamp": "2026-01-01T10:00:00Z",
             "message": {"role": "user", "content": "Summarise the huge log file build.log"}}
    last = {**base, "type": "assistant", "uuid": "u3", "timestamp": "2026-01-01T10:00:09Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "The build log shows 3 errors."}]}}
    with open(f, "wb") as fh:
        fh.write(json.dumps(first).encode() + b"\n")
        fh.write(b'{"parentUuid": "u1", "sessionId": "big", "type": "user", "uuid": "u2", '
                 b'"message": {"role": "user", "content": [{"type": "tool_result", "content": "')
        chunk = b"0123456789abcdef" * 65536  # 1 MB
        for _ in range(50):
            fh.write(chunk)
        fh.write(b'"}]}}\n')
        fh.write(json.dumps(last).encode() + b"\n")
    assert f.stat().st_size > 50 * MB
    return f


@pytest.mark.parametrize("fmt", ["auto", "jsonl", "episodes", "openclaw", "hermes", "markdown"])
def test_50mb_line_is_skipped_without_loading_it(huge_line_file, fmt):
    f = huge_line_file
    kind = detect_format(f) if fmt == "auto" else fmt
    if fmt == "auto":
        assert kind == "claude-code"
    tracemalloc.start()
    try:
        p = PARSERS[kind](f)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    limit = MAX_LINE_BYTES_HERMES if kind == "hermes" else MAX_LINE_BYTES  # Hermes lines are whole sessions
    assert (2, f"line longer than {limit // MB} MB (50 MB); skipped") in errors(p)
    assert_one_line(p, f)
    # never the whole 50 MB line: at most the line limit (twice: the buffered reader joins its chunks)
    assert peak < 2 * limit + 16 * MB, f"peak {peak / MB:.0f} MB"
    if kind == "claude-code":
        (ep,) = p.episodes
        assert ep.text == "user: Summarise the huge log file build.log\nassistant: The build log shows 3 errors."
        assert p.spans == [(1, 3, ep.id)]


# -- empty file ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, content", [("empty.jsonl", b""), ("blank.jsonl", b"\n  \n\n"),
                                           ("empty.md", b""), ("blank.md", b"\n\n")])
def test_empty_file(tmp_path, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    p = parse(f)
    assert errors(p) == [(0, "empty file: nothing to ingest")]
    assert p.episodes == []
    for parser in PARSERS.values():
        assert errors(parser(f)) == [(0, "empty file: nothing to ingest")]


# -- valid JSON that is not an object -------------------------------------------------------------
@pytest.mark.parametrize("source", [OPENCLAW, HERMES, ROOT / "samples" / "episodes.jsonl"])
def test_json_line_that_is_not_an_object(tmp_path, source):
    lines = lines_of(source)
    f = tmp_path / source.name
    bad = [b"[1, 2, 3]\n", b'"just a string"\n', b"42\n", b"null\n"]
    f.write_bytes(lines[0] + b"".join(bad) + b"".join(lines[1:]))
    p = parse(f)
    assert detect_format(f) == detect_format(source)
    assert errors(p) == [(2, "expected a JSON object, got list"), (3, "expected a JSON object, got string"),
                         (4, "expected a JSON object, got number"), (5, "expected a JSON object, got null")]
    assert [e.id for e in p.episodes] == [e.id for e in parse(source).episodes]


def test_object_of_the_wrong_shape_is_named(tmp_path):
    f = tmp_path / "h.jsonl"
    f.write_bytes(lines_of(HERMES)[0] + b'{"id": "s2", "messages": "not a list"}\n')
    p = parse(f)
    assert errors(p) == [(2, "messages: expected a list (one Hermes session a line)")]
    assert len(p.episodes) == 1
    g = tmp_path / "o.jsonl"
    g.write_bytes(lines_of(OPENCLAW)[0] + b'{"type": "message", "id": "z", "parentId": null, "message": "hi"}\n'
                  + b"".join(lines_of(OPENCLAW)[1:]))
    assert errors(parse(g)) == [(2, "message: expected an object")]


# -- Markdown with broken front matter -----------------------------------------------------------
def test_unclosed_front_matter(tmp_path):
    f = tmp_path / "2026-04-01.md"
    f.write_text("---\ntitle: Never closed\n# Heading\nBody text survives.\n")
    p = parse(f)
    assert errors(p) == [(1, "front matter opened on line 1 is never closed with '---'; read as text")]
    assert any("Body text survives." in e.text for e in p.episodes)


def test_front_matter_with_bad_lines(tmp_path):
    f = tmp_path / "notes.md"
    f.write_text("---\ntitle: Kept\nthis line is not yaml\ntags: [a, b\ndate: 2026-04-02\n---\n"
                 "# Heading\nBody text survives.\n")
    p = parse(f)
    assert errors(p) == [
        (3, "front matter: expected 'key: value', got 'this line is not yaml'; line skipped"),
        (4, "front matter: unterminated value for 'tags'; key skipped"),
    ]
    (ep,) = p.episodes
    assert ep.meta["title"] == "Kept" and ep.first_ts.isoformat().startswith("2026-04-02")
    assert ep.text == "# Heading\nBody text survives." and p.spans == [(7, 8, ep.id)]


# -- unreadable -------------------------------------------------------------------------------------
def test_unreadable_path_is_reported_not_raised(tmp_path):
    d = tmp_path / "a-directory.jsonl"
    d.mkdir()
    for parser in PARSERS.values():
        [(line, err)] = errors(parser(d))
        assert line == 0 and err.startswith("cannot read: ")


# -- the batch goes on ----------------------------------------------------------------------------
def test_a_batch_with_every_bad_input_ingests_the_good_rest(tmp_path, huge_line_file):
    from core.ingest.pipeline import ingest

    from conftest import make_memory

    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(OPENCLAW, batch / "good-openclaw.jsonl")
    shutil.copy(HERMES, batch / "good-hermes.jsonl")
    (batch / "good.md").write_text("# Good\nA good markdown note about rollbacks.\n")
    trunc = lines_of(OPENCLAW)
    trunc[6] = trunc[6][:40] + b"\n"
    (batch / "truncated.jsonl").write_bytes(b"".join(trunc))
    (batch / "utf8.jsonl").write_bytes(b'{"role": "user", "content": "ok line", "session_id": "u"}\n'
                                       b'{"role": "user", "content": "\xff"}\n')
    (batch / "binary.jsonl").write_bytes(b"\x00\x01\x02" * 100)
    (batch / "empty.jsonl").write_bytes(b"")
    (batch / "notobject.jsonl").write_bytes(b'{"id": "n1", "text": "an episode line"}\n[1]\n')
    (batch / "broken.md").write_text("---\ntitle: x\n# H\nbody\n")
    shutil.copy(huge_line_file, batch / "huge.jsonl")
    memory = make_memory(tmp_path / "state", neo4j_uri=None)
    try:
        report = ingest(memory, [batch])
    finally:
        memory.close()
    by_file = {}
    for m in report.malformed:
        by_file.setdefault(Path(m.file).name, []).append((m.line, m.error.split(":")[0].split(" (")[0]))
        assert "\n" not in m.error
    assert by_file == {
        "truncated.jsonl": [(7, "invalid JSON")],
        "utf8.jsonl": [(2, "invalid UTF-8 at byte 29")],
        "binary.jsonl": [(0, "binary file")],
        "empty.jsonl": [(0, "empty file")],
        "notobject.jsonl": [(2, "expected a JSON object, got list")],
        "broken.md": [(1, "front matter opened on line 1 is never closed with '---'; read as text")],
        "huge.jsonl": [(2, "line longer than 8 MB")],
    }
    # 3 + 2 (good openclaw, hermes) + 1 (good.md) + 3 (truncated openclaw) + 1 (utf8) + 1 (notobject)
    # + 2 (broken.md: its unclosed front matter read as a section, then "# H") + 1 (huge)
    assert report.episodes_added == 14


# -- anything at all: never an exception ---------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_KEYS = st.sampled_from([
    "type", "message", "role", "content", "text", "id", "parentId", "timestamp", "session_id", "sessionId", "uuid",
    "isSidechain", "agentId", "messages", "tool_calls", "function", "name", "arguments", "input", "summary",
    "leafUuid", "toolName", "command", "output", "title", "source", "started_at", "cwd", "isMeta", "subtype"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(allow_nan=False),
                     st.sampled_from(["user", "assistant", "toolResult", "tool", "session", "message", "compaction",
                                      "text", "toolCall", "tool_use", "tool_result", "summary", "bashExecution"]),
                     st.text(max_size=20))
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(_KEYS, inner, max_size=6)), max_leaves=20)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_JSON.map(json.dumps), st.binary(max_size=30).map(lambda b: b.decode("latin-1"))),
                      min_size=1, max_size=8))
def test_no_input_makes_a_parser_raise(tmp_path, lines):
    f = tmp_path / "any.jsonl"
    f.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + b"\n")
    n = len(f.read_bytes().splitlines())
    for parser in PARSERS.values():
        p = parser(f)
        for m in p.malformed:
            assert 0 <= m.line <= n and "\n" not in m.error
        for first, last, eid in p.spans:
            assert first >= 1 and first <= last <= n and any(e.id == eid for e in p.episodes)
