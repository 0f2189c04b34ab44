"""``ars export``: the episodes as they are now, forgotten ones excluded, and
the JSON lines re-ingested into an empty state give the same ids and text.
Real `ars` processes, real SQLite files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import env_without_ars, write_episodes

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "ars"


def ars(state: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tui.cli.main"]
    env = env_without_ars(("ARS_", "CLAUDE_"))
    env.update({"ARS_STATE_DIR": str(state), "ARS_EMBEDDER": "off"})
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=120, cwd=ROOT,
                          stdin=subprocess.DEVNULL, start_new_session=True, env=env)


ROWS = [
    {"id": "manual:a:0", "source": "manual", "session_id": "a", "summary": "first", "agent": "claude-code",
     "text": "the build uses ninja and 日本語のテキスト", "topics": ["build"], "first_ts": "2026-10-01T09:00:00+00:00"},
    {"id": "manual:a:1", "source": "manual", "session_id": "a", "summary": "second",
     "text": "deploy with blue green\n# not a heading", "first_ts": "2026-11-02T09:00:00+00:00"},
    {"id": "manual:b:0", "source": "manual", "session_id": "b", "summary": "third",
     "text": "postgres vacuum settings", "first_ts": "2026-11-03T09:00:00+00:00"},
]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    st = tmp_path / "state"
    p = ars(st, "ingest", str(write_episodes(tmp_path / "eps.jsonl", ROWS)), "--format", "episodes")
    assert p.returncode == 0, p.stderr
    return st


def exported(state: Path, *args: str) -> list[dict]:
    p = ars(state, "export", *args)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def test_jsonl_round_trips_into_an_empty_state(state, tmp_path):
    rows = exported(state)
    assert [r["id"] for r in rows] == ["manual:a:0", "manual:a:1", "manual:b:0"]
    assert {r["id"]: r["text"] for r in rows} == {r["id"]: r["text"] for r in ROWS}
    out = tmp_path / "export.jsonl"
    p = ars(state, "export", "--output", str(out))
    assert p.returncode == 0, p.stderr
    fresh = tmp_path / "fresh"
    p = ars(fresh, "ingest", str(out), "--format", "episodes")
    assert p.returncode == 0, p.stderr
    again = exported(fresh)
    assert [(r["id"], r["text"], r["summary"], r["session_id"]) for r in again] == \
           [(r["id"], r["text"], r["summary"], r["session_id"]) for r in rows]


def test_forgotten_episodes_are_not_exported(state):
    assert ars(state, "forget", "manual:a:1").returncode == 0
    rows = exported(state)
    assert [r["id"] for r in rows] == ["manual:a:0", "manual:b:0"]
    p = ars(state, "export", "--format", "markdown")
    assert p.returncode == 0 and "blue green" not in p.stdout and "postgres vacuum" in p.stdout


def test_filters(state):
    assert [r["id"] for r in exported(state, "--session", "a")] == ["manual:a:0", "manual:a:1"]
    assert [r["id"] for r in exported(state, "--since", "2026-11-01")] == ["manual:a:1", "manual:b:0"]
    me = json.loads((state / "team.json").read_text()).get("host") or os.uname().nodename
    assert len(exported(state, "--scope", f"host={me}")) == 3
    assert exported(state, "--scope", "host=somebody-else") == []


def test_markdown_keeps_text_readable(state):
    p = ars(state, "export", "--format", "markdown")
    assert p.returncode == 0, p.stderr
    assert "## first" in p.stdout and "`manual:a:0`" in p.stdout and "日本語のテキスト" in p.stdout
    assert "\n\\# not a heading" in p.stdout  # a line of text never becomes a heading


@pytest.mark.parametrize("args, words", [
    (["--format", "xml"], "unknown --format"),
    (["--since", "yesterday"], "is not a date"),
    (["--scope", "colour=red"], "scope part"),
    (["--session", " "], "empty --session"),
])
def test_bad_input_one_line(state, args, words):
    p = ars(state, "export", *args)
    assert p.returncode == 2, p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], p.stderr
