"""`ars demo`: a fresh state directory seeded through the real pipeline, with
loops in every status; it works without Neo4j and uses it when configured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.api import BadInput
from tui.demo import MARKER, seed, state_kind
from tuihelp import ROOT, open_ars, seed_demo, settings


def test_seed_makes_loops_in_every_status_from_real_sessions(tmp_path: Path):
    state = tmp_path / "state"
    report = seed_demo(state)
    assert report.neo4j == "skipped" and report.malformed == 0
    with open_ars(state) as ars:
        loops, problems = ars.loop_list()
        assert problems == []
        statuses = [s.status for s in loops]
        assert set(statuses) == {"initialized", "active", "waiting_human", "blocked", "done", "aborted"}
        assert statuses.count("waiting_human") >= 2 and statuses.count("blocked") >= 1
        waiting = {s.pending_approval.kind for s in loops if s.status == "waiting_human"}
        assert waiting == {"approval", "question"}
        fork = next(s for s in loops if s.status == "active")
        assert fork.parent is not None and ars.loop_show(fork.parent.loop_id).status == "done"
        assert any(s.goal_id == "产品调研" and s.status == "done" for s in loops)
        # every session format went through the real parsers, Chinese and English
        for query, source in (("熔断器 冷却时间", "openclaw:"), ("CJK bigram tokenizer", "claude-code:"),
                              ("pgvector 预算 vector store", "hermes:"), ("本周计划 崩溃测试", "jsonl:")):
            hits = ars.recall(query, k=5, tiers="sqlite").hits
            assert any(h.episode_id.startswith(source) for h in hits), (query, [h.episode_id for h in hits])
        files = ars.recall("熔断器 冷却时间", k=3, tiers="files")
        assert files.tier("files").status == "ok" and files.hits  # the raw tier reads the copied sessions
    assert (state / MARKER).is_file() and state_kind(state) == "demo"


def test_seed_refuses_a_directory_with_other_data_and_reuses_its_own(tmp_path: Path):
    other = tmp_path / "real"
    other.mkdir()
    (other / "ledger.jsonl").write_text("")
    with pytest.raises(BadInput, match="already holds other data"):
        seed(settings=settings(other))
    state = tmp_path / "state"
    first = seed_demo(state)
    again = seed(settings=settings(state))
    assert again.reused and {l.loop_id for l in again.loops} == {l.loop_id for l in first.loops}
    fresh = seed(settings=settings(state), fresh=True)
    assert not fresh.reused and not ({l.loop_id for l in fresh.loops} & {l.loop_id for l in first.loops})
    with open_ars(state) as ars:
        assert len(ars.loop_list()[0]) == len(fresh.loops) == 8


def test_ars_demo_no_tui_and_tui_needs_a_terminal(tmp_path: Path):
    state = tmp_path / "state"
    env_cmd = [sys.executable, "-m", "tui.cli.main"]
    r = subprocess.run([*env_cmd, "demo", "--state", str(state), "--no-tui", "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert len(report["loops"]) == 8 and report["episodes_added"] > 10
    r = subprocess.run([*env_cmd, "tui", "--state", str(state)], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "needs a terminal" in r.stderr
    r = subprocess.run([*env_cmd, "tui", "--state", str(tmp_path / "missing")], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = subprocess.run([*env_cmd, "demo", "--state", str(ROOT / "samples"), "--no-tui"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "other data" in r.stderr


@pytest.mark.neo4j
def test_seed_uses_neo4j_when_configured(tmp_path: Path, neo4j_uri: str):
    state = tmp_path / "state"
    report = seed(settings=settings(state, neo4j_uri=neo4j_uri))
    assert report.neo4j == "synced", report.neo4j
    from core.api import ARS

    with ARS(settings(state, neo4j_uri=neo4j_uri)) as ars:
        r = ars.recall("Neo4j outage 熔断器", k=5, tiers="neo4j")
        assert r.tier("neo4j").status == "ok" and r.hits


def test_ars_tui_fast_path_says_what_the_cli_says(tmp_path: Path):
    """`ars tui` opens the dashboard without the typer CLI (tui/launch.py); its refusals are the
    CLI's, word for word and with the same exit code, and lines it does not know go to the CLI."""
    empty = tmp_path / "empty"
    empty.mkdir()
    state = tmp_path / "state"
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "demo", "--state", str(state), "--no-tui", "--json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    cases = [["--state", str(empty)], ["--state", str(state), "--view", "bogus"], [f"--state={state}"],
             ["--state", str(tmp_path / "missing")], ["--stat", str(state)]]
    for args in cases:
        fast, cli = (subprocess.run([sys.executable, "-m", mod, "tui", *args], cwd=ROOT, capture_output=True,
                                    text=True, timeout=60, stdin=subprocess.DEVNULL)
                     for mod in ("tui.entry", "tui.cli.main"))
        assert fast.returncode == cli.returncode == 2, (args, fast.stderr, cli.stderr)
        said = " ".join(fast.stderr.replace("tui.entry", "tui.cli.main").split())  # usage names the program run
        assert said == " ".join(cli.stderr.split()), args
        assert fast.stderr.strip(), args
    assert "holds no ARS state yet" in subprocess.run(
        [sys.executable, "-m", "tui.entry", "tui", "--state", str(empty)], cwd=ROOT, capture_output=True,
        text=True, timeout=60).stderr
    assert list(empty.iterdir()) == []  # nothing written into the empty directory
