"""``ars context``: the block a turn would get, as text and as JSON, and ``ars context show``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE, env_without_ars

ROOT = Path(__file__).resolve().parents[3]


def ars(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {**env_without_ars(), "ARS_EMBEDDER": "off", "ARS_SQLITE_DEADLINE": "3", "ARS_CONTEXT_DEADLINE": "5",
         **(env or {})}
    return subprocess.run([sys.executable, "-m", "tui.entry", *args], capture_output=True, text=True, cwd=ROOT,
                          env=e, timeout=120)


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> Path:
    s = tmp_path_factory.mktemp("ctx") / "state"
    r = ars("ingest", str(SAMPLE), "--state", str(s))
    assert r.returncode == 0, r.stderr
    return s


def test_plain_prints_exactly_the_json_text(state: Path):
    q = ["context", "neo4j outage recall fallback", "--state", str(state), "--no-record"]
    plain, as_json = ars(*q), ars(*q, "--json")
    assert plain.returncode == as_json.returncode == 0, plain.stderr + as_json.stderr
    got = json.loads(as_json.stdout)
    assert got["text"] and plain.stdout == got["text"] + "\n"
    assert got["text"].startswith("[ARS memory:") and len(got["text"]) <= 1500
    m = got["memories"][0]
    assert set(m) >= {"episode_id", "score", "ts", "time", "chars"} and m["chars"] > 0
    assert "(" in m["time"] and m["episode_id"] in got["text"]
    small = json.loads(ars(*q, "--json", "--budget", "400").stdout)
    assert len(small["text"]) <= 400


def test_nothing_to_inject_is_empty_stdout_and_one_line(state: Path, tmp_path: Path):
    for args in (["context", "What is the capital of Australia?", "--state", str(state), "--no-record"],
                 ["context", "restart the gateway", "--state", str(tmp_path / "nowhere")],
                 ["context", "\x01\x02", "--state", str(state)]):
        r = ars(*args)
        assert r.returncode == 0 and r.stdout == "", (args, r.stdout)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("note: nothing"), r.stderr
    assert not (tmp_path / "nowhere").exists()


def test_show_lists_each_turn_and_why_the_expected_memory_was_not_given(state: Path):
    for turn in ("u1", "u2"):
        r = ars("context", "neo4j outage recall fallback", "--session", "S1", "--agent", "claude-code", "--turn", turn,
                "--state", str(state), "--json")
        assert r.returncode == 0, r.stderr
    first = json.loads(ars("context", "show", "S1", "--state", str(state), "--json").stdout)["turns"][0]
    given = first["memories"][0]["episode_id"]
    shown = ars("context", "show", "S1", "--expect", given, "--state", str(state), "--json")
    turns = json.loads(shown.stdout)["turns"]
    assert [t["turn"] for t in turns] == ["u1", "u2"]
    assert turns[0]["expected"]["injected"] and turns[1]["expected"]["reason"].startswith("already given at turn u1")
    table = ars("context", "show", "S1", "--expect", given, "--state", str(state))
    assert table.returncode == 0 and "u1" in table.stdout and "u2" in table.stdout and "already" in table.stdout
    nobody = ars("context", "show", "nobody", "--state", str(state))
    assert nobody.returncode == 0 and "no turn of session" in nobody.stdout


def test_usage_errors_say_what_to_do(state: Path):
    r = ars("context", "one", "two", "--state", str(state))
    assert r.returncode == 2 and "one argument" in r.stderr
    r = ars("context", "x", "--expect", "e", "--state", str(state))
    assert r.returncode == 2 and "--expect goes with" in r.stderr
    r = ars("context", "x", "--budget", "-5", "--state", str(state))
    assert r.returncode == 2
