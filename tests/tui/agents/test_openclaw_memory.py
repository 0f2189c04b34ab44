"""ARS's memory in OpenClaw's turns, piece by piece: the long-lived ``ars hook openclaw
--serve`` answering memory requests (a turn's context, its capture, the memory tools)
and the plugin's own hooks (before_prompt_build, agent_end) under the minimal host
(tests/agents_stub/openclaw_plugin_host.mjs). The whole agent runs in
tests/tui/agents/test_openclaw_e2e.py.

Real parts: ``ars`` subprocesses on a real state directory (memory ingested by ``ars
ingest``), the plugin's JavaScript under Node 24 (``.agents/bin/node``). Cases that need
core's per-turn context (``ARS.context``), capture (``ARS.capture_turn``) or episode
text (``ARS.get``) say so and skip while this tree has none (fail under CI=true).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import env_without_ars
from tui.agents import memory_answer

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "ars"
NODE = ROOT / ".agents" / "bin" / "node"
HOST = ROOT / "tests" / "agents_stub" / "openclaw_plugin_host.mjs"
PLUGIN = ROOT / "tui" / "agents" / "openclaw_plugin"
DAY1 = "抓取了 137 个产品经理职位"


def needs(name: str) -> None:
    from core.api import ARS

    if hasattr(ARS, name):
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"ARS.{name} is missing from core")
    pytest.skip(f"ARS.{name} is not in this tree yet (core's per-turn memory, built on another branch)")


def ars(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], input=stdin, capture_output=True, text=True, timeout=timeout,
                          env=env_without_ars(("ARS_", "OPENCLAW_")))


def serve(state: Path, requests: list[dict]) -> dict:
    """Each request's answer by id, from one ``--serve`` process that reads them all and ends."""
    r = ars("hook", "openclaw", "--state", str(state), "--serve",
            stdin="".join(json.dumps(q, ensure_ascii=True) + "\n" for q in requests))
    assert r.returncode == 0, r.stderr
    return {a["id"]: a for a in map(json.loads, r.stdout.splitlines()) if "id" in a}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state directory holding day 1: the scraper's result, and a long unrelated note."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "boss.md").write_text(f"# boss_scraper.py\n\n运行 boss_scraper.py：{DAY1}，结果写进 jobs.csv。\n")
    (notes / "garden.md").write_text("# Garden\n\n" + "Tomatoes need water every morning in July. " * 200 + "\n")
    state = tmp_path / "state"
    r = ars("ingest", str(notes), "--state", str(state))
    assert r.returncode == 0, r.stderr
    return state


# -- the serve process ------------------------------------------------------------------------
def test_memory_search_answers_each_memory_once_within_its_bound(state: Path):
    got = serve(state, [{"id": 1, "op": "search", "query": "boss_scraper 产品经理 职位"},
                        {"id": 2, "op": "search", "query": "tomatoes water July"},
                        {"id": 3, "op": "search", "query": ""}])
    text = got[1]["text"]
    assert DAY1 in text and text.startswith(memory_answer.DATA_NOTE)
    ids = [line.split("`")[1] for line in text.splitlines() if line.startswith("- id `")]
    assert ids and len(ids) == len(set(ids))  # each memory once (a whole RecallResult repeats a hit three times)
    assert len(got[2]["text"]) <= memory_answer.SEARCH_LIMIT + 100  # a long memory is cut to its snippet
    assert "needs a query" in got[3]["text"]


def test_a_turn_with_bad_input_or_no_memory_goes_on_with_nothing(state: Path, tmp_path: Path):
    """A 1 MB prompt, a lone surrogate, control bytes: each answered, with one line saying
    what was wrong; a missing state directory: nothing injected, and why."""
    got = serve(state, [{"id": 1, "op": "context", "prompt": "产品经理 " * 200_000, "session": "s", "timeout_ms": 30_000},
                        {"id": 2, "op": "context", "prompt": "boss \ud800 scraper", "session": "s", "timeout_ms": 30_000},
                        {"id": 3, "op": "context", "prompt": "\x00\x01\x02\x7f", "session": "s", "timeout_ms": 30_000}])
    assert "1,000,000 characters, the first 8,000 used" in got[1]["warn"]
    assert "not Unicode text" in got[2]["warn"] and "NUL" in got[3]["warn"]
    assert all("error" not in a and isinstance(a["text"], str) for a in got.values()), got
    none = serve(tmp_path / "nowhere", [{"id": 1, "op": "context", "prompt": "boss_scraper", "timeout_ms": 5000}])
    assert none[1]["text"] == "" and "no ARS state directory" in none[1]["note"]
    assert not (tmp_path / "nowhere").exists()  # a turn never creates a state directory


def test_a_context_request_past_its_wait_is_not_recalled(state: Path):
    got = serve(state, [{"id": 1, "op": "context", "prompt": "boss_scraper", "session": "s", "timeout_ms": 0}])
    assert got[1] == {"id": 1, "late": True}


def test_memory_get_pages_one_memory(state: Path):
    needs("get")
    found = serve(state, [{"id": 1, "op": "search", "query": "tomatoes water July"}])[1]["text"]
    eid = next(line.split("`")[1] for line in found.splitlines() if line.startswith("- id `"))
    got = serve(state, [{"id": 1, "op": "get", "episode": eid, "max_chars": 1000},
                        {"id": 2, "op": "get", "episode": eid, "offset": 1000, "max_chars": 1000},
                        {"id": 3, "op": "get", "episode": "no-such-id"}])
    assert eid in got[1]["text"] and "memory_get with offset 1000" in got[1]["text"]
    assert "Tomatoes" in got[2]["text"] and len(got[2]["text"]) < 1000 + 400
    assert "no-such-id" in got[3]["text"]


def test_recall_into_a_turn_and_capture_its_end(state: Path):
    """The loop in miniature, with no OpenClaw: a turn ends (capture: a tool call's output and
    the answer), then a new session's turn about it is given it; an unrelated turn gets nothing."""
    needs("context")
    needs("capture_turn")
    result = "Deployed build 4711 to the staging cluster, 12 pods ready"
    got = serve(state, [
        {"id": 1, "op": "capture", "session": "day1", "turn": "r1", "user": "deploy the build to staging",
         "assistant": "Done: build 4711 is on staging.",
         "tools": [{"name": "exec", "input": {"command": "make deploy-staging"}, "exit": 0, "output": result}]},
        {"id": 2, "op": "context", "prompt": "which build went to staging yesterday?", "session": "day2",
         "turn": "r2", "timeout_ms": 30_000},
        {"id": 3, "op": "context", "prompt": "what is the capital of Mongolia?", "session": "day2b",
         "timeout_ms": 30_000}])
    assert got[1]["episodes"], got[1]
    assert "4711" in got[2]["text"], got[2]
    assert got[3]["text"] == "", got[3]


# -- the plugin's hooks under the minimal host ---------------------------------------------
@pytest.fixture(scope="module")
def node() -> Path:
    if not (NODE.exists() and os.access(NODE, os.X_OK)):
        if os.environ.get("CI") == "true":
            pytest.fail(f"no Node at {NODE}: scripts/agents/install-openclaw installs it")
        pytest.skip(f"no Node at {NODE} (run scripts/agents/install-openclaw)")
    return NODE


def host_run(node: Path, config: dict, commands: list[dict], cwd: Path) -> tuple[dict, list[str]]:
    """Each command's result by its n, and the plugin's log lines."""
    proc = subprocess.run([str(node), str(HOST), str(PLUGIN), json.dumps(config)], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env=env_without_ars(("ARS_", "OPENCLAW_")),
                          input="".join(json.dumps(c, ensure_ascii=False) + "\n" for c in commands))
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    done = next((x for x in lines if x.get("done")), None)
    assert done is not None, proc.stderr[-2000:]
    return {x["n"]: x for x in lines if "n" in x}, done["logs"]


def turn_messages(user: str, command: str, output: str, answer: str) -> list[dict]:
    """One ended turn as OpenClaw's agent_end gives it (a minute ago): the user, a tool call,
    its result, the answer."""
    t = int(time.time() * 1000) - 60_000
    return [{"role": "user", "content": user, "timestamp": t},
            {"role": "assistant", "content": [{"type": "toolCall", "id": "call_1", "name": "exec",
                                               "arguments": {"command": command}}], "timestamp": t + 1000},
            {"role": "toolResult", "toolCallId": "call_1", "toolName": "exec", "isError": False,
             "content": [{"type": "text", "text": output}], "details": {"exitCode": 0}, "timestamp": t + 2000},
            {"role": "assistant", "content": [{"type": "text", "text": answer}], "timestamp": t + 3000}]


def test_plugin_gives_each_turn_its_memories_and_keeps_each_turn(node: Path, state: Path, tmp_path: Path):
    needs("context")
    needs("capture_turn")
    config = {"ars": [str(SCRIPT)], "state": str(state), "project": str(tmp_path)}
    day1 = turn_messages("run the scraper", "python boss_scraper.py", f"{DAY1}\n写入 jobs.csv", "Done: 137 jobs.")
    results, logs = host_run(node, config, [
        {"n": 1, "hook": "agent_end", "event": {"runId": "run-1", "success": True, "messages": day1},
         "ctx": {"sessionId": "day1-session", "agentId": "main", "runId": "run-1"}},
        {"n": 2, "hook": "before_prompt_build",  # the prompt holds the OpenClaw envelope; the user's words apart
         "event": {"prompt": "[Sat 2026-12-05 09:00 UTC] boss_scraper 跑出来的结果给我看看",
                   "currentUserMessage": "boss_scraper 跑出来的结果给我看看", "messages": []},
         "ctx": {"sessionId": "day2-session", "runId": "run-2", "trigger": "user"}},
        {"n": 3, "hook": "before_prompt_build",
         "event": {"prompt": "What is the boiling point of ethanol?", "messages": []},
         "ctx": {"sessionId": "day2-other", "runId": "run-3", "trigger": "user"}},
    ], tmp_path)
    assert results[1]["result"] is None, (results, logs)
    assert DAY1 in results[2]["result"]["prependContext"], (results, logs)
    assert results[3]["result"] is None, (results, logs)  # nothing about it in memory: nothing injected


@pytest.mark.parametrize("argv,why", [(["/nonexistent/ars"], "cannot start"), (["HANG"], "did not answer")])
def test_plugin_turn_goes_on_without_memory_when_ars_is_dead_or_slow(node: Path, tmp_path: Path, argv: list,
                                                                      why: str):
    if argv == ["HANG"]:  # an ars that starts and never answers
        hang = tmp_path / "hang"
        hang.write_text("#!/bin/sh\nexec sleep 30\n")
        hang.chmod(0o755)
        argv = [str(hang)]
    config = {"ars": argv, "state": str(tmp_path / "state"), "memory": {"recallMs": 300, "warmupMs": 300}}
    results, logs = host_run(node, config, [
        {"n": 1, "hook": "before_prompt_build", "event": {"prompt": "hello", "messages": []},
         "ctx": {"sessionId": "s1"}}], tmp_path)
    assert results[1]["result"] is None and "error" not in results[1], results
    recall_lines = [line for line in logs if "no recall for this turn" in line]
    assert len(recall_lines) == 1 and why in recall_lines[0], logs
