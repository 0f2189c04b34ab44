"""The recall daemon's turn ops: ``context`` (ARS.context for a fresh-process hook, or an
agent that cannot import ARS) and ``capture``; the stdlib client's ``context``/``capture``.

Real processes and sockets: the client runs in a fresh interpreter, as Claude Code's
UserPromptSubmit hook does; every daemon a test starts is stopped, or killed, at teardown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SAMPLE
from tui.daemon import turns

ROOT = Path(__file__).resolve().parents[3]
READY_WITHIN = 60.0

CLIENT = """
import json, sys
from tui.daemon import client
op, state, payload = sys.argv[1], sys.argv[2], json.loads(sys.stdin.read())
if op == "context":
    got = client.context(state, payload.pop("prompt"), **payload)
elif op == "capture":
    got = client.capture(state, payload["agent"], payload["session"], payload["turn"])
else:
    got = client.request(client.address.socket_path(client.address.state_path(state), client.address.fingerprint()),
                         payload, state=client.address.state_path(state))
print(json.dumps({"reply": got, "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("core", "pydantic"))}))
"""


def _env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("ARS_")}
    e.update({"ARS_RECALL_DAEMON": "auto", "ARS_RECALL_DAEMON_IDLE": "120", "ARS_EMBEDDER": "off",
              "ARS_CONTEXT_DEADLINE": "5", "PYTHONPATH": str(ROOT)})
    return e


def ask(op: str, state: Path, payload: dict) -> dict:
    r = subprocess.run([sys.executable, "-c", CLIENT, op, str(state)], input=json.dumps(payload), capture_output=True,
                       text=True, cwd=ROOT, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def ars(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui.entry", *args], capture_output=True, text=True, cwd=ROOT,
                          env=_env(), timeout=120)


def daemons(state: Path) -> list[dict]:
    r = ars("daemon", "status", "--json", "--state", str(state))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["daemons"]


@pytest.fixture
def seeded(tmp_path: Path):
    state = tmp_path / "state"
    assert ars("ingest", str(SAMPLE), "--state", str(state)).returncode == 0
    yield state
    pids = [d["pid"] for d in daemons(state)] if state.is_dir() else []
    ars("daemon", "stop", "--state", str(state))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def warm(state: Path) -> dict:
    """The first turn finds no daemon (nothing injected) and starts one; then it answers."""
    first = ask("context", state, {"prompt": "neo4j outage recall fallback"})
    assert first["reply"] is None
    until = time.monotonic() + READY_WITHIN
    while True:
        got = ask("context", state, {"prompt": "neo4j outage recall fallback", "record": False})
        if got["reply"] is not None:
            return got
        assert time.monotonic() < until, "no warm daemon answered a context request"
        time.sleep(0.3)


def test_a_hook_gets_the_turn_context_from_the_daemon_without_loading_core(seeded: Path):
    got = warm(seeded)
    reply = got["reply"]
    assert set(reply) >= {"text", "memories", "latency_ms", "note"}
    assert got["modules"] == []  # the fresh process imported neither core nor pydantic
    from core.api import ARS, load_settings

    with ARS(load_settings(state_dir=seeded, embedder="off"), create=False) as local:
        mine = local.context("neo4j outage recall fallback", record=False, deadline=5)
    assert reply["text"] == mine.text and reply["text"]
    assert [m["episode_id"] for m in reply["memories"]] == [m.episode_id for m in mine.memories]
    # recorded by the daemon: the session's receipt, and the memory is not given twice
    once = ask("context", seeded, {"prompt": "neo4j outage recall fallback", "session": "cc-1", "agent": "claude-code",
                                   "turn": "u1"})["reply"]
    again = ask("context", seeded, {"prompt": "neo4j outage recall fallback", "session": "cc-1"})["reply"]
    assert once["memories"] and not ({m["episode_id"] for m in once["memories"]} &
                                     {m["episode_id"] for m in again["memories"]})
    shown = ars("context", "show", "cc-1", "--json", "--state", str(seeded))
    assert [t["turn"] for t in json.loads(shown.stdout)["turns"]] == ["u1", "#2"]


def test_bad_requests_are_answered_in_one_line_and_the_daemon_stays(seeded: Path):
    warm(seeded)
    for payload in ({"op": "context", "prompt": 5}, {"op": "context"}, {"op": "context", "prompt": "x", "budget": "big"},
                    {"op": "capture", "agent": "a"}):
        reply = ask("raw", seeded, payload)["reply"]
        assert reply and reply["error"].startswith("malformed"), payload
    huge = ask("context", seeded, {"prompt": "outage " * 200_000 + "\ud800", "session": "big"})["reply"]
    assert huge is not None and "\n" not in huge["note"]
    assert [d for d in daemons(seeded) if d.get("ready")]


def test_capture_goes_to_the_facade_or_says_it_cannot(seeded: Path):
    from core.api import ARS

    warm(seeded)
    turn = {"user": "restart the gateway", "assistant": "restarted", "tools": [], "ts": "2026-11-30T20:08:00+00:00",
            "turn": "t1"}
    raw = ask("raw", seeded, {"op": "capture", "agent": "hermes", "session": "h-1", "turn": turn})["reply"]
    via_client = ask("capture", seeded, {"agent": "hermes", "session": "h-2", "turn": turn})["reply"]
    if hasattr(ARS, "capture_turn"):
        assert raw["ids"] and via_client["ids"]
    else:
        assert "capture" in raw["error"] and via_client is None


def test_no_daemon_and_no_state_mean_nothing_injected(tmp_path: Path):
    got = ask("context", tmp_path / "missing", {"prompt": "anything"})
    assert got["reply"] is None and not (tmp_path / "missing").exists()


def test_request_fields_are_checked_before_the_facade_is_called():
    with pytest.raises(KeyError):
        turns.context_call({})
    for bad in ({"prompt": 1}, {"prompt": "x", "session": 3}, {"prompt": "x", "budget": True},
                {"prompt": "x", "record": "yes"}):
        with pytest.raises(TypeError):
            turns.context_call(bad)
    with pytest.raises(TypeError):
        turns.capture_call({"agent": "a", "session": "s", "turn": "not an object"})
    assert callable(turns.context_call({"prompt": "x", "budget": 800, "session": None}))
