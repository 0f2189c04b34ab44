"""Decisions only a person can make (DESIGN.md, "Trust model"), tried as the agent would.

The agent runs as the same user, so these tests do what it can do: run `ars`
with no terminal (a new session: no controlling tty) and no passphrase, write
decision files and key files directly, make its own key, edit the policy file.
Only the supervisor's passphrase (given on a pipe with --passphrase-fd) makes
a decision the hook and the loop engine act on. Real processes, real files;
timeouts only guard against a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings
from core.inbox import signing
from conftest import env_without_ars, passphrase_pipe

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "ars"
PASS = "correct horse battery staple"


def _env(**extra: str) -> dict:
    env = env_without_ars(("ARS_", "CLAUDE_"))
    env.update(extra)
    return env


def _ars_cmd() -> list[str]:
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tui.cli.main"]


def ars(*args: str, passphrase: str | None = None, env: dict | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess:
    """`ars ARGS` as the agent runs it (no terminal: a new session), or with the
    supervisor's passphrase on a pipe (its fd number passed on) when ``passphrase`` is given."""
    with passphrase_pipe(passphrase) as pp:
        return subprocess.run(_ars_cmd() + list(args) + pp.args, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, start_new_session=True, pass_fds=pp.fds,
                              env=env or _env(), cwd=ROOT)


def one_line_error(p: subprocess.CompletedProcess) -> str:
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) >= 1 and lines[-1].startswith("error:"), p.stderr
    return " ".join(p.stderr.split())


@pytest.fixture
def supervised(tmp_path: Path) -> tuple[Path, str]:
    """A state directory with a supervisor key; (state, its fingerprint)."""
    state = tmp_path / "state"
    p = ars("supervisor", "init", "--state", str(state), passphrase=PASS)
    assert p.returncode == 0, p.stderr
    fp = ars("supervisor", "show", "--state", str(state)).stdout.strip()
    assert signing.looks_like_fingerprint(fp)
    return state, fp


def _request(state: Path, detail: str = "rm -rf /tmp/victim", binds: str = "Bash", expires_in: float = 600):
    with ARS(Settings(state_dir=state), create=True) as a:
        return a.request_approval("claude-code:s1", "Claude Code Bash: rm -rf", details=detail, binds=binds,
                                  expires_in=expires_in)


# -- the key ------------------------------------------------------------------------------------------
def test_the_key_is_encrypted_and_only_the_passphrase_unlocks_it(supervised):
    state, fp = supervised
    sealed = json.loads((state / "supervisor" / "key.enc").read_bytes())  # Argon2id-sealed (test_key_file.py)
    assert sealed["kdf"]["name"] == "argon2id" and oct((state / "supervisor" / "key.enc").stat().st_mode & 0o777) == "0o600"
    assert signing.unlock(state, PASS.encode()).fingerprint == fp
    with pytest.raises(signing.BadPassphrase):
        signing.unlock(state, b"not the passphrase")
    # init again is refused; a rotation needs the current passphrase
    p = ars("supervisor", "init", "--state", str(state), passphrase="another passphrase")
    assert p.returncode == 2 and "already exists" in one_line_error(p)
    p = ars("supervisor", "init", "--state", str(state), "--rotate", passphrase="wrong passphrase!")
    assert p.returncode == 1 and "wrong supervisor passphrase" in one_line_error(p)
    assert ars("supervisor", "show", "--state", str(state)).stdout.strip() == fp


def test_a_short_passphrase_is_refused(tmp_path):
    p = ars("supervisor", "init", "--state", str(tmp_path / "s"), passphrase="eleven char")
    assert p.returncode == 2 and "at least 12" in one_line_error(p)
    assert not (tmp_path / "s" / "supervisor" / "key.enc").exists()


# -- deciding without the passphrase ---------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ("inbox", "approve", "{id}"), ("inbox", "reject", "{id}", "--reason", "no"),
    ("inbox", "respond", "{id}", "ok"),
])
def test_the_agent_cannot_decide_without_a_terminal_or_passphrase(supervised, argv):
    state, _ = supervised
    req = _request(state)
    p = ars(*[a.format(id=req.id) for a in argv], "--state", str(state))
    assert p.returncode == 2
    assert "no terminal" in one_line_error(p) and "--passphrase-fd" in p.stderr
    assert Inbox_status(state, req.id) == "pending"  # nothing decided, nothing lost


def Inbox_status(state: Path, request_id: str) -> str:
    with ARS(Settings(state_dir=state)) as a:
        return a.inbox_get(request_id).status


def test_a_wrong_passphrase_decides_nothing(supervised):
    state, _ = supervised
    req = _request(state)
    p = ars("inbox", "approve", req.id, "--state", str(state), passphrase="guessed wrong")
    assert p.returncode == 1 and "wrong supervisor passphrase" in one_line_error(p)
    assert Inbox_status(state, req.id) == "pending"


def test_the_api_refuses_an_unsigned_decision_when_a_key_exists(supervised):
    state, _ = supervised
    req = _request(state)
    from core.inbox import SignatureRequired

    with ARS(Settings(state_dir=state)) as a, pytest.raises(SignatureRequired):
        a.inbox_decide(req.id, "approve")


def test_a_signed_decision_verifies_only_for_its_request_input_and_key(supervised, tmp_path):
    state, fp = supervised
    req = _request(state)
    p = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
    assert p.returncode == 0, p.stderr
    with ARS(Settings(state_dir=state)) as a:
        d = a.inbox_get(req.id).decision
    record = d.model_dump(mode="json")
    exact = signing.input_hash("Bash", "rm -rf /tmp/victim")
    payload, why = signing.verify_decision(record, pin=fp, request_id=req.id, input_hash=exact)
    assert payload is not None and payload["verdict"] == "approve", why
    # another input, another request, another pinned key, an altered text, an expired one
    assert "another input" in signing.verify_decision(record, pin=fp, request_id=req.id,
                                                      input_hash=signing.input_hash("Bash", "rm -rf /"))[1]
    assert "another request" in signing.verify_decision(record, pin=fp, request_id="req-000000000000",
                                                        input_hash=exact)[1]
    other = tmp_path / "agent-state"
    agent_fp = signing.init(other, b"the agent's own pass")
    assert "another key" in signing.verify_decision(record, pin=agent_fp, request_id=req.id, input_hash=exact)[1]
    forged = dict(record, signed=record["signed"].replace('"approve"', '"approve" '))
    assert "does not match" in signing.verify_decision(forged, pin=fp, request_id=req.id, input_hash=exact)[1]
    from datetime import datetime, timedelta, timezone

    later = datetime.now(timezone.utc) + signing.DECISION_TTL + timedelta(seconds=1)
    assert "expired" in signing.verify_decision(record, pin=fp, request_id=req.id, input_hash=exact, now=later)[1]


# -- the hook, attacked -----------------------------------------------------------------------------------------
def _hook_cmd(state: Path, pin: str | None) -> list[str]:
    return _ars_cmd() + ["hook", "claude-code", "--state", str(state)] + (["--supervisor", pin] if pin else [])


def _pre(project: Path, command: str, tool_use_id: str = "toolu_1") -> dict:
    """PreToolUse in bypassPermissions mode: the hook holds there whatever the gate matches
    (in the modes where Claude Code prompts, PermissionRequest holds it: tests/test_hooks.py)."""
    return {"session_id": "s1", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
            "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": tool_use_id}


def _hook_bg(state: Path, pin: str | None, payload: dict, project: Path) -> subprocess.Popen:
    path = project / f"event-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(payload))
    with path.open("rb") as fh:
        return subprocess.Popen(_hook_cmd(state, pin), stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=_env(CLAUDE_PROJECT_DIR=str(project)), cwd=ROOT)


def _waiting(state: Path, proc: subprocess.Popen, deadline: float = 60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with ARS(Settings(state_dir=state), create=True) as a:
            pending = a.inbox.list("pending")
        if pending:
            return pending[0]
        if proc.poll() is not None:
            raise AssertionError(f"the hook ended before asking: {proc.stdout.read()!r} {proc.stderr.read()!r}")
        time.sleep(0.05)
    raise AssertionError("the hook never created its request")


def _answer(proc: subprocess.Popen) -> tuple[str, str, str]:
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    hso = json.loads(out)["hookSpecificOutput"]
    return hso["permissionDecision"], hso["permissionDecisionReason"], err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    (p / "victim").mkdir(parents=True)
    return p


def test_the_supervisors_signed_approval_allows_and_the_agents_own_does_nothing(supervised, project):
    state, fp = supervised
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}"), project)
    req = _waiting(state, proc)
    assert req.binds == "Bash" and req.expires_at is not None and req.meta["tool_use_id"] == "toolu_1"
    agent = ars("inbox", "approve", req.id, "--state", str(state))  # from the agent's Bash tool
    assert agent.returncode == 2 and proc.poll() is None
    p = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
    assert p.returncode == 0, p.stderr
    decision, reason, _ = _answer(proc)
    assert decision == "allow" and req.id in reason and signing.short(fp) in reason


@pytest.mark.parametrize("forgery", ["unsigned", "agent-key", "other-input"])
def test_a_forged_decision_never_becomes_allow(supervised, project, tmp_path, forgery):
    """The agent writes the decision file itself: unsigned, signed with a key it made
    (after replacing the state's key files), or a real signature over another input.
    The hook refuses it loudly, sets it aside (the request is open again) and keeps
    waiting for the supervisor; if none comes, it answers ask."""
    state, fp = supervised

    if forgery == "agent-key":  # nobody can decide after the key files are gone: give up soon
        _sign_policy(state, short_wait(4), tmp_path)
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}"), project)
    req = _waiting(state, proc)
    from core.inbox.models import InboxDecision
    from core.infra.once import create_once

    fields = {}
    if forgery == "agent-key":  # the agent's own `ars supervisor init`, over the real key files
        import shutil

        shutil.rmtree(state / "supervisor")
        signing.init(state, b"the agent's passphrase")
        fields = signing.unlock(state, b"the agent's passphrase").sign_decision(
            request_id=req.id, input_hash=req.exact_hash(), verdict="approve", note="", decided_at=req.created_at)
    elif forgery == "other-input":  # the supervisor signed what the request file showed: the agent had edited it
        fields = signing.unlock(state, PASS.encode()).sign_decision(
            request_id=req.id, input_hash=signing.input_hash("Bash", "ls"), verdict="approve", note="",
            decided_at=req.created_at)
    d = InboxDecision(verdict="approve", decided_by="alice@laptop:1", **fields)
    assert create_once(state / "inbox" / f"{req.id}.decision.json", d.model_dump_json().encode())
    refused = state / "inbox" / f"{req.id}.refused.1.json"
    end = time.monotonic() + 60
    while not refused.exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert refused.exists(), "the forged decision was not set aside"
    expect = {"unsigned": "not signed", "agent-key": "another key", "other-input": "another input"}[forgery]
    events = [json.loads(line) for line in (state / "ledger.jsonl").read_text().splitlines()]
    assert any(e.get("type") == "inbox.refused" and expect in json.dumps(e) for e in events)
    if forgery == "agent-key":
        decision, reason, err = _answer(proc)
        assert decision == "ask" and expect in reason
    else:  # the request is open again: the supervisor's signed approval is what runs it
        assert Inbox_status(state, req.id) == "pending"
        p = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
        assert p.returncode == 0, p.stderr
        decision, reason, err = _answer(proc)
        assert decision == "allow"
    assert "REFUSED the approval" in err and expect in err


def test_before_a_key_is_pinned_an_approval_is_at_most_ask(tmp_path, project):
    state = tmp_path / "state"
    proc = _hook_bg(state, None, _pre(project, f"rm -rf {project / 'victim'}"), project)
    req = _waiting(state, proc)
    p = ars("inbox", "approve", req.id, "--state", str(state))  # no key: recorded unverified, with a warning
    assert p.returncode == 0 and "unverified approval" in p.stderr
    decision, reason, _ = _answer(proc)
    assert decision == "ask" and "no supervisor key pinned" in reason


def test_a_rejection_needs_no_signature_and_denies(supervised, project):
    state, fp = supervised
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}"), project)
    req = _waiting(state, proc)
    p = ars("inbox", "reject", req.id, "--reason", "keep it", "--state", str(state), passphrase=PASS)
    assert p.returncode == 0, p.stderr
    decision, reason, _ = _answer(proc)
    assert decision == "deny" and "keep it" in reason


def short_wait(seconds: float) -> str:
    """The built-in policy with the hook's wait cut to ``seconds``."""
    import re

    from core.inbox.policy import current_text

    return re.sub(r"(?m)^timeout = .*$", f"timeout = {seconds:g}", current_text(Path("/nonexistent")))


def _sign_policy(state: Path, text: str, tmp_path: Path) -> None:
    f = tmp_path / f"policy-{time.monotonic_ns()}.toml"
    f.write_text(text)
    p = ars("gate", "set", str(f), "--state", str(state), passphrase=PASS)
    assert p.returncode == 0, p.stderr


def test_a_hook_that_gives_up_expires_its_request_and_a_late_decision_is_refused(supervised, project, tmp_path):
    state, fp = supervised

    _sign_policy(state, short_wait(1), tmp_path)
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}"), project)
    req = _waiting(state, proc)
    decision, reason, _ = _answer(proc)
    assert decision == "ask" and "expired" in reason
    assert Inbox_status(state, req.id) == "expired"
    late = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
    assert late.returncode == 1 and f"nobody is waiting for {req.id}: it expired at" in one_line_error(late)
    # the next session is told only of live requests
    with ARS(Settings(state_dir=state)) as a:
        assert [r.id for r in a.inbox_list("pending")] == []


def test_a_request_past_its_expiry_reads_expired_and_cannot_be_decided(supervised):
    state, _ = supervised
    req = _request(state, expires_in=0.05)
    time.sleep(0.1)
    assert Inbox_status(state, req.id) == "expired"
    p = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
    assert p.returncode == 1 and "nobody is waiting" in one_line_error(p)


def test_post_tool_use_withdraws_the_request_a_killed_hook_left(supervised, project):
    state, fp = supervised
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}", "toolu_9"), project)
    req = _waiting(state, proc)
    proc.kill()  # Claude Code's own timeout, or the user pressing Esc
    proc.communicate(timeout=30)
    post = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "x"}, "tool_use_id": "toolu_9", "tool_response": {}}
    p = subprocess.run(_hook_cmd(state, fp), input=json.dumps(post), capture_output=True, text=True, timeout=60,
                       env=_env(CLAUDE_PROJECT_DIR=str(project)), cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert Inbox_status(state, req.id) == "withdrawn"
    late = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
    assert late.returncode == 1 and "nobody is waiting" in late.stderr


def test_the_marker_names_the_request_before_it_exists(supervised, project):
    """The hook writes its marker, naming the request's id, before the request appears: a
    hook killed the moment the request shows (the test above) always left its marker. A
    marker whose request was never made (killed in between) ends quietly."""
    from tui.agents import held_call

    state, fp = supervised
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}", "toolu_7"), project)
    req = _waiting(state, proc)
    marker = held_call.marker_path(state, "s1", "toolu_7")
    assert open(marker).read() == req.id
    proc.kill()
    proc.communicate(timeout=30)
    said = []
    with open(held_call.marker_path(state, "s1", "toolu_8"), "w") as fh:
        fh.write("req-000000000000")  # a request never made
    assert held_call.end_call(str(state), "s1", "toolu_8", "ran", said.append) == 0
    assert said == [] and not os.path.exists(held_call.marker_path(state, "s1", "toolu_8"))
    assert held_call.end_call(str(state), "s1", "toolu_7", "ran", said.append) == 1
    assert said == [] and Inbox_status(state, req.id) == "withdrawn"


# -- the policy -----------------------------------------------------------------------------------------------
def test_an_unsigned_or_altered_policy_is_not_used(supervised, project, tmp_path):
    """The agent's `printf 'timeout = 1\\n' > gate.toml`: the built-in defaults hold, and the hook says why."""
    state, fp = supervised
    (state / "gate.toml").write_text("timeout = 1\n")
    from core.inbox import policy

    gate, why = policy.load(state, fp)
    assert "not signed" in why and gate.timeout == policy.builtin().timeout
    # signed by the supervisor: used; then altered by the agent: not used
    _sign_policy(state, "timeout = 7\n", tmp_path)
    gate, why = policy.load(state, fp)
    assert why == "" and gate.timeout == 7
    (state / "gate.toml").write_text("timeout = 1\n")
    gate, why = policy.load(state, fp)  # the last good one stays in force, never the laxer defaults
    assert "changed after the supervisor signed it" in why and gate.timeout == 7
    # signed by a key the agent made: another key
    _sign_policy(state, "timeout = 7\n", tmp_path)
    import shutil

    shutil.rmtree(state / "supervisor")
    signing.init(state, b"the agent's passphrase")
    policy.sign(state, "timeout = 1\n", signing.unlock(state, b"the agent's passphrase"))
    gate, why = policy.load(state, fp)  # (its own signing replaced the last good copy too: the defaults then)
    assert "another key" in why and gate.timeout != 1
    # a hook that pins no key trusts no policy file
    assert "pins no supervisor key" in policy.load(state, None)[1]


def test_gate_set_checks_the_policy_before_signing(supervised, tmp_path):
    state, _ = supervised
    bad = tmp_path / "bad.toml"
    bad.write_text("timeout = -3\n")
    p = ars("gate", "set", str(bad), "--state", str(state), passphrase=PASS)
    assert p.returncode == 2 and "timeout" in one_line_error(p)
    assert not (state / "gate.toml").exists()
    p = ars("gate", "set", str(bad), "--state", str(state))
    assert p.returncode == 2


# -- loops ----------------------------------------------------------------------------------------------------
def _waiting_loop(state: Path, tmp_path: Path) -> str:
    goal = tmp_path / "goal.json"
    goal.write_text(json.dumps({"goal": "clean the build", "success_criteria": ["clean"],
                                "script": [{"action": "rm -rf build", "outcome": "pass", "needs_approval": True}]}))
    p = ars("loop", "run", "--goal-file", str(goal), "--state", str(state), "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["status"] == "waiting_human", s
    return s["loop_id"]


def test_a_loop_resumes_only_on_the_supervisors_signed_approval(supervised, tmp_path):
    state, _ = supervised
    loop_id = _waiting_loop(state, tmp_path)
    p = ars("loop", "approve", loop_id, "--state", str(state))
    assert p.returncode == 2 and "no terminal" in one_line_error(p)
    p = ars("loop", "approve", loop_id, "--state", str(state), "--json", passphrase=PASS)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["status"] == "done" and s["decisions"][-1]["signature"]


def test_the_engine_refuses_a_decision_file_the_agent_wrote(supervised, tmp_path):
    state, _ = supervised
    loop_id = _waiting_loop(state, tmp_path)
    with ARS(Settings(state_dir=state)) as a:
        st = a.loop_show(loop_id)
    from core.loop.decisions import claim
    from core.loop.models import Decision

    claim(state, Decision(loop_id=loop_id, request_id=st.pending_approval.request_id, kind="approve",
                          iteration=st.pending_approval.iteration, decided_by="alice@laptop:1"))
    p = ars("loop", "resume", loop_id, "--state", str(state), "--json")
    s = json.loads(p.stdout)
    assert s["decisions"][-1]["kind"] == "reject" and "approval refused" in s["decisions"][-1]["note"]
    assert "was refused" in p.stderr
    assert not any(h.get("action") == "rm -rf build" and h.get("step") == "act" for h in s.get("history", []))


def test_without_a_key_the_demo_loops_proceed_unverified(tmp_path):
    state = tmp_path / "state"
    loop_id = _waiting_loop(state, tmp_path)
    p = ars("loop", "approve", loop_id, "--state", str(state), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] == "done"


def test_gate_edit_opens_the_editor_and_signs_on_save(supervised, tmp_path):
    state, fp = supervised
    editor = tmp_path / "editor.sh"  # an editor that changes the wait, as a person would
    editor.write_text("#!/bin/sh\nsed -i 's/^timeout = .*/timeout = 9/' \"$1\"\n")
    editor.chmod(0o755)
    p = ars("gate", "edit", "--state", str(state), passphrase=PASS, env=_env(EDITOR=str(editor)))
    assert p.returncode == 0, p.stderr
    from core.inbox import policy

    gate, why = policy.load(state, fp)
    assert why == "" and gate.timeout == 9
    shown = ars("gate", "show", "--state", str(state))
    assert f"signed by {fp}" in shown.stdout and "timeout = 9" in shown.stdout
    # an editor that leaves a broken policy: nothing is saved, the signed one stays in force
    editor.write_text("#!/bin/sh\necho 'timeout = [' > \"$1\"\n")
    p = ars("gate", "edit", "--state", str(state), passphrase=PASS, env=_env(EDITOR=str(editor)))
    assert p.returncode == 2 and "nothing was saved" in one_line_error(p)
    assert policy.load(state, fp)[0].timeout == 9


def test_an_agent_that_edits_what_the_request_shows_voids_the_approval(supervised, project, tmp_path):
    """The agent rewrites its held request's file to show a harmless command (keeping the
    input hash of what will really run); the supervisor approves what they were shown.
    The signature covers the shown text too: the hook refuses it, nothing runs."""
    state, fp = supervised
    _sign_policy(state, short_wait(5), tmp_path)
    proc = _hook_bg(state, fp, _pre(project, f"rm -rf {project / 'victim'}"), project)
    req = _waiting(state, proc)
    path = state / "inbox" / f"{req.id}.json"
    body = json.loads(path.read_text())
    body["detail"], body["summary"] = "ls -la", "Claude Code Bash: ls -la"
    path.write_text(json.dumps(body))
    p = ars("inbox", "approve", req.id, "--state", str(state), passphrase=PASS)
    assert p.returncode == 0, p.stderr
    decision, reason, err = _answer(proc)
    assert decision == "ask" and "showed other text" in err, (reason, err)
    assert (project / "victim").is_dir()


def test_every_wrong_passphrase_is_said_as_one(tmp_path):
    """A wrong passphrase usually fails the key's padding check, but about one time in 256 the
    garbage passes it and fails the parse: that is a wrong passphrase too, never "not a
    supervisor key" (a CI run met it). Keys made since are sealed with an AEAD (a wrong passphrase
    fails its tag: test_key_file.py); this is a key made before, as it was written then."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    state = tmp_path / "state"
    signing.init(state, b"the right one")
    old = Ed25519PrivateKey.generate()
    pem = old.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.BestAvailableEncryption(b"the right one"))
    (state / "supervisor" / "key.enc").write_bytes(pem)
    for i in range(400):
        with pytest.raises(signing.BadPassphrase):
            signing.unlock(state, f"wrong {i}".encode())
