"""`ars recall --json`'s fast path (tui/entry.py) answers as the full CLI does:
the same JSON, the same one-line errors and exit codes; other recall lines go to
the full CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import env_without_ars
from loophelp import ROOT, ars
from statehelp import one_line_error, seeded  # noqa: F401 - seeded: the fixture


def _entry(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = env_without_ars()
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "tui.entry", *args], capture_output=True, text=True, cwd=ROOT,
                          env=e, timeout=120)


def _comparable(stdout: str) -> dict:
    d = json.loads(stdout)
    d.pop("latency_ms")
    for t in d["tiers"]:
        t.pop("latency_ms")
    return d


@pytest.mark.parametrize("args", [
    ["recall", "Neo4j outage", "--json"],
    ["recall", "--json", "-k", "3", "--tiers", "sqlite,files", "--", "第一性原理 outage"],
])
def test_fast_recall_prints_what_the_cli_prints(seeded: Path, args: list[str]):
    placed = [args[0], "--state", str(seeded), *args[1:]]  # before a "--"
    fast = _entry(*placed)
    full = ars(*placed)
    assert fast.returncode == full.returncode == 0, (fast.stderr, full.stderr)
    assert _comparable(fast.stdout) == _comparable(full.stdout)


@pytest.mark.parametrize("args,env", [
    (["recall", "", "--json"], {}),
    (["recall", "x", "--json", "-k", "0"], {}),
    (["recall", "x", "--json", "--tiers", "bogus"], {}),
    (["recall", "x", "--json"], {"ARS_NEO4J_URI": "http://x"}),
])
def test_fast_recall_errors_as_the_cli_does(seeded: Path, args: list[str], env: dict):
    fast = _entry(*args, "--state", str(seeded), env=env)
    full = ars(*args, state=seeded, env=env)
    assert fast.returncode == full.returncode == 2
    assert one_line_error(fast) == one_line_error(full)


def test_other_recall_lines_go_to_the_full_cli(seeded: Path, tmp_path: Path):
    table = _entry("recall", "Neo4j outage", "--state", str(seeded))  # no --json: a table for a person
    assert table.returncode == 0 and "tokens: neo4j outage" in table.stdout
    helped = _entry("recall", "--help")
    assert helped.returncode == 0 and "--explain" in helped.stdout
    missing = _entry("recall", "x", "--json", "--state", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "does not exist" in one_line_error(missing)
