"""The ``ars`` command as a person runs it: real processes, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import env_without_ars, SAMPLE

ARS = [sys.executable, "-m", "tui.cli.main"]
ROOT = Path(__file__).resolve().parents[3]


def ars(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = env_without_ars()
    e.update(env or {})
    return subprocess.run([*ARS, *args], capture_output=True, text=True, cwd=ROOT, env=e, timeout=120)


@pytest.fixture
def ingested(tmp_path) -> Path:
    state = tmp_path / "state"
    r = ars("ingest", str(SAMPLE), "--state", str(state), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["files"] == 1 and report["episodes_added"] == 10 and report["malformed"] == []
    return state


def test_recall_json_is_a_recall_result(ingested):
    r = ars("recall", "Neo4j outage", "--state", str(ingested), "--json", "-k", "3")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["hits"][0]["episode_id"] == "openclaw:s-0412:0"
    assert {t["tier"] for t in data["tiers"]} == {"neo4j", "sqlite", "files"}
    assert len(data["hits"]) <= 3


def test_recall_table_shows_tier_status_and_components(ingested):
    r = ars("recall", "第一性原理", "--state", str(ingested), "--tiers", "sqlite,files", "--wide")
    assert r.returncode == 0, r.stderr
    assert "openclaw:s-0413:0" in r.stdout
    assert "sqlite ok" in r.stdout and "files ok" in r.stdout
    assert "bm25" in r.stdout and "scan" in r.stdout
    # a tier not asked says why in a word or two
    line = ars("recall", "第一性原理", "--state", str(ingested)).stdout.strip().splitlines()[-1]
    assert line.startswith("neo4j skipped (not configured) · sqlite ok") and "files skipped (fallback only)" in line


def test_recall_at_80_columns_is_three_lines_a_hit_never_a_word_a_line(ingested):
    r = ars("recall", "Neo4j outage recall deadline", "--state", str(ingested), "-k", "3", env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), r.stdout
    hits = [line for line in lines if line[:3].strip().isdigit()]
    assert len(hits) == 3 and len(lines) <= 3 * 3 + 4, r.stdout  # a head line, 3 lines a hit, the tiers' line
    assert "sqlite #" in r.stdout and "sqlite ok" in r.stdout
    assert not any(len(line.split()) == 1 and len(line.strip()) < 8 for line in lines if line.strip()), r.stdout
    explain = ars("recall", "Neo4j outage recall deadline", "--state", str(ingested), "--explain",
                  "openclaw:s-0412:0", env={"COLUMNS": "80"})
    assert explain.returncode == 0 and all(len(line) <= 80 for line in explain.stdout.splitlines()), explain.stdout
    assert "fused rank 1" in explain.stdout and "verdict: returned at fused rank 1" in explain.stdout
    helptext = ars("recall", "--help", env={"COLUMNS": "80"}).stdout
    assert "dense" in helptext and "--wide" in helptext


def test_recall_explain(ingested):
    r = ars("recall", "Alice", "--explain", "openclaw:s-0412:0", "--state", str(ingested), "--json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    assert ex["episode_id"] == "openclaw:s-0412:0"
    assert "alice" in ex["tiers"][1]["missing_tokens"]


@pytest.mark.parametrize("args, message", [
    (["recall", ""], "empty query"),
    (["recall", "   "], "empty query"),
    (["recall", "x", "--tiers", "graph"], "unknown tier 'graph'"),
    (["recall", "x", "-k", "0"], "k must be at least 1"),
    (["ingest", "does/not/exist.jsonl"], "nothing could be read"),
    (["ingest", "samples/episodes.jsonl", "--format", "yaml"], "unknown format 'yaml'"),
])
def test_bad_input_exits_2_with_one_line(ingested, args, message):
    r = ars(*args, "--state", str(ingested))
    assert r.returncode == 2
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_an_error_prints_its_brackets(tmp_path):
    # errors are text, not rich markup: the fix they name must reach the person whole
    r = ars("demo", "--state", str(tmp_path / "demo"), "--no-tui", env={"ARS_EMBEDDER": "bogus"})
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "ARS_EMBEDDER 'bogus'" in lines[0] and "pip install 'ars[e5]'" in lines[0]
    weird = tmp_path / "[bold]x"
    weird.write_text("not a directory")
    r = ars("recall", "x", "--state", str(weird))
    assert r.returncode == 2 and "[bold]x" in r.stderr, r.stderr


def test_missing_state_directory_exits_2(tmp_path):
    for cmd in (["recall", "x"], ["doctor"]):
        r = ars(*cmd, "--state", str(tmp_path / "nope"))
        assert r.returncode == 2
        assert "state directory" in r.stderr and "does not exist" in r.stderr


def test_state_from_environment(ingested):
    r = ars("recall", "Alice", "--json", env={"ARS_STATE_DIR": str(ingested)})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["episode_id"] == "hermes:h-88:0"


def test_doctor_hides_secrets(ingested):
    r = ars("doctor", "--state", str(ingested), "--json",
            env={"ARS_NEO4J_PASSWORD": "hunter2-secret", "OPENAI_API_KEY": "sk-verysecret"})
    assert r.returncode == 0, r.stderr
    assert "hunter2" not in r.stdout and "sk-verysecret" not in r.stdout
    data = json.loads(r.stdout)
    assert data["config"]["neo4j_password"] == "set"
    assert {t["tier"]: t["status"] for t in data["tiers"]}["sqlite"] == "ok"


def test_ingest_reports_malformed_lines_and_keeps_the_rest(tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(b'{"id": "a", "text": "first good"}\n{"id": "b", "text": \n[1, 2]\n\xff\xfe\n{"id": "c", "text": "third good"}\n')
    r = ars("ingest", str(f), "--state", str(tmp_path / "s"), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["episodes_added"] == 2
    assert [(m["line"], m["error"].split(":")[0]) for m in rep["malformed"]] == [
        (2, "invalid JSON"), (3, "expected a JSON object, got list"), (4, "invalid UTF-8 at byte 0")]
    again = json.loads(ars("ingest", str(f), "--state", str(tmp_path / "s"), "--json").stdout)
    assert again["episodes_added"] == 0 and again["unchanged_files"] == 1
    forced = json.loads(ars("ingest", str(f), "--force", "--state", str(tmp_path / "s"), "--json").stdout)
    assert forced["episodes_added"] == 0 and forced["duplicates_skipped"] == 2


@pytest.mark.parametrize("group", [[], ["loop"]])
def test_command_lists_wrap_each_help_as_one_paragraph(group):
    """typer kept a docstring's line breaks in the list of commands (ragged half-lines at any
    width but the one the docstring was wrapped for): a line breaks only where the next word
    would not fit (tui/cli/short_help.py)."""
    out = ars(*group, "--help", env={"COLUMNS": "100"}).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "─ Commands " in line)
    panel = []
    for line in lines[start + 1:]:
        if line.startswith("╰"):
            break
        panel.append(line.strip()[1:-1])  # inside the borders
    column = min(len(p) - len(p.lstrip()[len(p.lstrip().split()[0]):].lstrip()) for p in panel if p[1] != " ")
    room = max(len(p[column:].rstrip()) for p in panel)  # as wide as rich filled any line
    checked = 0
    for here, after in zip(panel, panel[1:]):
        if after[1] != " ":  # the next line starts the next command
            continue
        text, nxt = here[column:].rstrip(), after[column:].split()[0]
        assert len(text) + 1 + len(nxt) > room, f"broken before it had to: {here!r} / {after!r}"
        checked += 1
    assert checked, out  # some help wraps at 100 columns: the check saw continuation lines
