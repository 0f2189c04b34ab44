"""Claude Code approvals through ``PermissionRequest`` (`ars hook claude-code`), as
real processes: PreToolUse holds only what is held whatever Claude Code's own
permissions say (sensitive paths; everything in bypassPermissions mode); the rest
of what the gate holds waits in the inbox when Claude Code is about to prompt, and
a request left to Claude Code's prompt is settled by PostToolUse or Stop ("decided
in the terminal"). The event shapes are Claude Code 2.1's (a PermissionRequest
carries no tool_use_id). tests/tui/agents/test_claude_code_e2e.py runs the real Claude Code."""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.inbox import Inbox
from test_hooks import (PASS, ars, event, finish, hook, hook_bg, project, set_gate, state,  # noqa: F401 - fixtures
                        wait_for_request, with_timeout)


def perm(project: Path, command: str) -> dict:
    """Claude Code's PermissionRequest for a Bash call (no tool_use_id in it)."""
    return event("PermissionRequest", project, tool_name="Bash", tool_input={"command": command,
                                                                            "description": "run it"},
                 permission_suggestions=[{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])


def decision(r) -> dict:
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    out = json.loads(r.stdout)
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "PermissionRequest" and set(hso) == {"hookEventName", "decision"}, out
    return hso["decision"]


def test_pre_tool_use_leaves_a_prompted_call_to_permission_request(project, state):
    """Default mode: rm -rf passes PreToolUse (Claude Code will prompt for it, or its own
    allow rules let it through); a sensitive path is held at PreToolUse all the same."""
    pre = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"}, tool_use_id="t1")
    r = hook(pre, state)
    assert (r.returncode, r.stdout) == (0, b""), r.stderr
    assert not (state / "inbox").exists() or not Inbox(state).list()
    set_gate(state, with_timeout(0.3))
    ssh = os.path.expanduser("~/.ssh/authorized_keys")
    r = hook(event("PreToolUse", project, tool_name="Write", tool_input={"file_path": ssh, "content": "k"},
                   tool_use_id="t2"), state)
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask", out
    [req] = Inbox(state).list("expired")
    assert "sensitive-path" in req.meta["rules"]
    # ... and when Claude Code then prompts for it, PermissionRequest does not hold it twice
    r = hook(event("PermissionRequest", project, tool_name="Write", tool_input={"file_path": ssh, "content": "k"}),
             state)
    assert (r.returncode, r.stdout) == (0, b"") and len(Inbox(state).list()) == 1


def test_signed_approval_allows_and_reject_denies_with_the_reason(project, state):
    set_gate(state, with_timeout(45))
    p = hook_bg(perm(project, "rm -rf build/cache"), state)
    req = wait_for_request(state, p)
    assert req.detail == "rm -rf build/cache" and req.meta["event"] == "PermissionRequest"
    assert req.meta["tool_use_id"].startswith("input:")  # no tool_use_id in the event: keyed by the input
    assert ars("inbox", "approve", req.id, "--note", "cache only", state=state).returncode == 0
    r = finish(p)
    assert decision(r) == {"behavior": "allow"}
    assert "cache only" in r.stderr.decode() and req.id in r.stderr.decode()

    p = hook_bg(perm(project, "git push --force origin main"), state)
    req = wait_for_request(state, p)
    assert ars("inbox", "reject", req.id, "--reason", "open a PR instead", state=state).returncode == 0
    d = decision(finish(p))
    assert d["behavior"] == "deny" and "open a PR instead" in d["message"] and req.id in d["message"]


def test_no_decision_leaves_the_prompt_and_post_tool_use_settles_it(project, state):
    """No decision in time: no answer (Claude Code's prompt decides) and the request
    waits for the outcome; the call ran (PostToolUse, matched by its input): the request
    ends "decided in the terminal", and a late approval decides nothing."""
    set_gate(state, with_timeout(0.3))
    r = hook(perm(project, "kubectl delete namespace prod"), state)
    assert (r.returncode, r.stdout) == (0, b""), r.stderr
    assert "Claude Code's own prompt decides" in r.stderr.decode()
    [req] = Inbox(state).list("pending")
    post = event("PostToolUse", project, tool_name="Bash", tool_use_id="toolu_x", tool_response={},
                 tool_input={"command": "kubectl delete namespace prod", "description": "run it"})
    r = hook(post, state)
    assert (r.returncode, r.stdout) == (0, b""), r.stderr
    got = Inbox(state).get(req.id)
    assert got.status == "withdrawn" and "decided in the terminal: the call ran" in got.decision.note, got
    late = ars("inbox", "approve", req.id, state=state)
    assert late.returncode != 0 and "nobody is waiting" in late.stderr


def test_stop_settles_a_call_the_terminal_did_not_run(project, state):
    set_gate(state, with_timeout(0.3))
    assert hook(perm(project, "psql -c 'DROP TABLE users'"), state).stdout == b""
    [req] = Inbox(state).list("pending")
    r = hook(event("Stop", project, stop_hook_active=False), state)
    assert r.returncode == 0, r.stderr
    got = Inbox(state).get(req.id)
    assert got.status == "withdrawn" and "decided in the terminal" in got.decision.note
    assert "without running it" in got.decision.note


def test_install_writes_the_permission_request_hook(project, state):
    r = ars("install", "claude-code", "--project", str(project), state=state)
    assert r.returncode == 0, r.stderr
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    [group] = hooks["PermissionRequest"]
    assert group["matcher"] == "*" and "hook claude-code" in group["hooks"][0]["command"]
    assert group["hooks"][0]["timeout"] == hooks["PreToolUse"][0]["hooks"][0]["timeout"]
