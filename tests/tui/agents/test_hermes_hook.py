"""Hermes shell hooks (`ars hook hermes`) and `ars install hermes`, as real
processes: event JSON in the shape Hermes 0.19's agent/shell_hooks.py pipes
(``hook_event_name``, ``tool_name``, ``tool_input``, ``session_id``, ``cwd``,
``extra``) into the console script, decisions by `ars inbox ...` in other
processes, real config.yaml files. tests/tui/agents/test_hermes_e2e.py runs the real Hermes.
Tests never assert timings: a subprocess timeout only guards against a hang."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.inbox import Inbox, signing
from core.inbox.gate import Gate
from conftest import env_without_ars, passphrase_pipe
from tui.agents.hermes import as_gate_calls, patch_files

SCRIPT = Path(sys.executable).parent / "ars"
ROOT = Path(__file__).resolve().parents[3]
PASS = "the supervisor's passphrase"


def _argv(*args: str) -> list[str]:
    return ([str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tui.cli.main"]) + list(args)


def _hook_cmd(state: Path, timeout: float = 60, pin: str | None = "auto") -> list[str]:
    pin = signing.public_fingerprint(state) if pin == "auto" else pin
    return _argv("hook", "hermes", "--state", str(state), "--timeout", f"{timeout:g}",
                 *(["--supervisor", pin] if pin else []))


def event(name: str, project: Path, tool_name: str | None = None, tool_input: dict | None = None,
          call_id: str = "call_test_1", **extra) -> dict:
    return {"hook_event_name": name, "tool_name": tool_name, "tool_input": tool_input,
            "session_id": "20261202_hermes_test", "cwd": str(project),
            "extra": {"tool_call_id": call_id, "task_id": "", "turn_id": "t1", **extra}}


def hook(payload, state: Path, timeout: float = 60, argv: list[str] | None = None) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(argv or _hook_cmd(state, timeout), input=data, capture_output=True, timeout=120,
                          env=env_without_ars(("ARS_", "HERMES_")))


def blocked(r: subprocess.CompletedProcess) -> str:
    """The block message Hermes reads (its bridge keeps {"action": "block", "message": ...})."""
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    out = json.loads(r.stdout)
    assert out["action"] == "block" and out["message"].startswith("BLOCKED"), out
    return out["message"]


def passed(r: subprocess.CompletedProcess) -> None:
    """Hermes runs the call: no output at all."""
    assert r.returncode == 0 and r.stdout == b"", (r.returncode, r.stdout, r.stderr)


def ars(*args: str, state: Path, passphrase: str | None = None) -> subprocess.CompletedProcess:
    with passphrase_pipe(passphrase) as pp:
        return subprocess.run(_argv(*args, "--state", str(state), *pp.args), capture_output=True, text=True,
                              timeout=60, env=env_without_ars(("ARS_", "HERMES_")), pass_fds=pp.fds,
                              stdin=subprocess.DEVNULL)


def wait_for_request(state: Path, proc: subprocess.Popen, within: float = 60):
    inbox = Inbox(state)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pending = inbox.list("pending")
        if pending:
            return pending[0]
        assert proc.poll() is None, f"the hook ended before asking: {proc.communicate()}"
        time.sleep(0.05)
    raise AssertionError("no inbox request appeared")


def hook_bg(payload: dict, state: Path, timeout: float = 60, argv: list[str] | None = None) -> subprocess.Popen:
    """The hook in the background (it waits for a decision), its event read from a file."""
    import tempfile

    with tempfile.TemporaryFile() as fh:
        fh.write(json.dumps(payload).encode())
        fh.seek(0)
        return subprocess.Popen(argv or _hook_cmd(state, timeout), stdin=fh, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env_without_ars(("ARS_", "HERMES_")))


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


@pytest.fixture
def state(tmp_path) -> Path:
    d = tmp_path / "state"
    signing.init(d, PASS.encode())
    return d


# -- Hermes' tools in the gate's words --------------------------------------------------------
def test_hermes_tools_map_onto_the_gate(tmp_path):
    assert as_gate_calls("terminal", {"command": "ls", "workdir": "/x"}) == [("Bash", {"command": "ls"})]
    assert as_gate_calls("write_file", {"path": "a.txt", "content": "x"}) == \
        [("Write", {"file_path": "a.txt", "content": "x"})]
    assert as_gate_calls("read_file", {"path": "~/.ssh/id_rsa"}) == [("Read", {"file_path": "~/.ssh/id_rsa"})]
    assert as_gate_calls("patch", {"mode": "patch", "patch": "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n"
                                   "*** Add File: /etc/b\n+z\n*** End Patch"}) == \
        [("Edit", {"file_path": "a.py"}), ("Edit", {"file_path": "/etc/b"})]
    assert as_gate_calls("patch", {"mode": "patch", "patch": "nonsense"}) == [("Edit", {"file_path": None})]
    assert as_gate_calls("web_extract", {"urls": ["http://169.254.169.254/", "https://example.com"]}) == \
        [("WebFetch", {"url": "http://169.254.169.254/"}), ("WebFetch", {"url": "https://example.com"})]
    # Hermes 0.19 names MCP tools mcp__<server>__<tool> (once rewritten to mcp____ars__recall and held)
    assert as_gate_calls("mcp__ars__recall", {"query": "x"}) == [("mcp__ars__recall", {"query": "x"})]
    assert as_gate_calls("mcp__my_db__run_query", {}) == [("mcp__my_db__run_query", {})]
    assert as_gate_calls("mcp_ars_recall", {"query": "x"}) == [("mcp__ars__recall", {"query": "x"})]  # older Hermes
    assert as_gate_calls("ars_recall", {"query": "x"}) == [] and as_gate_calls("ars_get", {"id": "e"}) == []
    assert as_gate_calls("todo", {"todos": []}) == []
    assert as_gate_calls("execute_code", {"code": "import os"}) == [("execute_code", {"code": "import os"})]
    assert patch_files("*** Move to: c.py\n*** Delete File: d.py") == ["c.py", "d.py"]

    gate = Gate.builtin()
    proj = str(tmp_path)

    def held(tool, inp):
        return any(gate.check(t, i, project_dir=proj, cwd=proj) for t, i in as_gate_calls(tool, inp))

    assert held("terminal", {"command": "rm -rf photos"})
    assert not held("terminal", {"command": "ls -la"})
    assert held("write_file", {"path": "/etc/passwd", "content": ""})
    assert not held("write_file", {"path": f"{proj}/notes.md", "content": ""})
    assert held("read_file", {"path": os.path.expanduser("~/.ssh/id_rsa")})
    assert held("patch", {"mode": "patch", "patch": "*** Update File: /etc/hosts\n"})
    assert held("web_extract", {"urls": ["http://169.254.169.254/latest/meta-data"]})
    assert held("execute_code", {"code": "import shutil; shutil.rmtree('/')"})  # arbitrary code: unknown, held
    assert not held("mcp_ars_recall", {"query": "x"})
    for tool in ("recall", "get", "explain", "startup_context", "remember", "request_approval"):
        assert not held(f"mcp__ars__{tool}", {"query": "x"}), tool  # ARS never holds its own tools
    assert held("mcp_github_delete_repo", {}) and held("mcp__github__delete_repo", {})


# -- pre_tool_call ------------------------------------------------------------------------------------
def test_a_passing_call_gets_no_output(project, state):
    passed(hook(event("pre_tool_call", project, "terminal", {"command": "ls -la"}), state))
    passed(hook(event("pre_tool_call", project, "read_file", {"path": str(project / "a.txt")}), state))
    passed(hook(event("pre_tool_call", project, "todo", {"todos": []}), state))
    # ARS's own memory tools: its MCP server's (Hermes' name for them) and its memory provider's
    passed(hook(event("pre_tool_call", project, "mcp__ars__recall", {"query": "restart"}), state))
    passed(hook(event("pre_tool_call", project, "mcp__ars__get", {"episode_id": "hermes:s1"}), state))
    passed(hook(event("pre_tool_call", project, "ars_recall", {"query": "restart"}), state))
    assert not (state / "inbox").exists() or not Inbox(state).list("pending")


def test_approval_signed_by_the_supervisor_lets_it_run_a_reject_blocks(project, state):
    proc = hook_bg(event("pre_tool_call", project, "terminal", {"command": "rm -rf photos"}), state)
    req = wait_for_request(state, proc)
    assert req.source == "hermes:20261202_hermes_test" and req.detail == "rm -rf photos"
    # the agent's own try, without the passphrase: refused, nothing decided
    assert ars("inbox", "approve", req.id, state=state).returncode != 0
    assert proc.poll() is None
    r = ars("inbox", "approve", req.id, state=state, passphrase=PASS)
    assert r.returncode == 0, r.stderr
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == b"", (out, err)

    proc = hook_bg(event("pre_tool_call", project, "write_file", {"path": "/etc/motd", "content": "hi"},
                         call_id="call_2"), state)
    req = wait_for_request(state, proc)
    assert json.loads(req.detail) == {"path": "/etc/motd", "content": "hi"}
    assert ars("inbox", "reject", req.id, "--reason", "not outside the project", state=state,
               passphrase=PASS).returncode == 0
    out, err = proc.communicate(timeout=60)
    message = blocked(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert "not outside the project" in message and req.id in message


def test_an_approved_call_and_how_it_ran_become_one_memory(project, state):
    """The supervisor approves a held restart; Hermes runs it; post_tool_call hands over its exit and
    output: one memory says who approved what, when, and how it ended (in Chinese too)."""
    from core.api import ARS
    from core.config import Settings

    if not hasattr(ARS, "inbox_outcome"):
        if os.environ.get("CI") == "true":
            pytest.fail("ARS.inbox_outcome is missing from core")
        pytest.skip("ARS.inbox_outcome is not in this tree yet (core's gated-call memory, another branch)")
    pre = event("pre_tool_call", project, "terminal", {"command": "openclaw gateway restart"}, call_id="call_rs")
    proc = hook_bg(pre, state)
    req = wait_for_request(state, proc)
    assert ars("inbox", "approve", req.id, state=state, passphrase=PASS).returncode == 0
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == b"", (out, err)
    result = json.dumps({"output": "Gateway restarted (pid 4242)", "exit_code": 0, "error": None})
    post = event("post_tool_call", project, "terminal", {"command": "openclaw gateway restart"}, call_id="call_rs",
                 status="ok", result=result)
    r = hook(post, state)
    assert r.returncode == 0 and r.stdout == b"", r
    with ARS(Settings(state_dir=state)) as a:
        for question in ("did the gateway restart finish", "重启完了没"):
            hits = a.recall(question, k=3).hits
            assert hits and hits[0].episode_id == f"inbox:{req.id}", (question, hits)
        text = a.get(f"inbox:{req.id}").text
    assert "approved" in text and "openclaw gateway restart" in text and "Gateway restarted (pid 4242)" in text
    assert "exit 0" in text, text
    assert not list((state / "inbox" / "ran").iterdir())  # the call's marker is gone with its outcome
    # every other call's post_tool_call finds no marker: one stat, nothing written
    assert hook(event("post_tool_call", project, "terminal", {"command": "ls"}, call_id="call_ls", status="ok",
                      result="{}"), state).returncode == 0


def test_no_decision_before_hermes_timeout_blocks_and_expires(project, state):
    r = hook(event("pre_tool_call", project, "terminal", {"command": "rm -rf photos"}), state, timeout=7)
    message = blocked(r)
    (req,) = Inbox(state).list()
    assert req.status == "expired" and req.id in message and "no valid decision" in message


def test_without_a_pin_an_approval_still_blocks(project, tmp_path):
    state = tmp_path / "nokey"
    proc = hook_bg(event("pre_tool_call", project, "terminal", {"command": "rm -rf x"}), state,
                   argv=_hook_cmd(state, 60, pin=None))
    req = wait_for_request(state, proc)
    assert ars("inbox", "approve", req.id, state=state).returncode == 0  # no key: an unsigned approval
    out, err = proc.communicate(timeout=60)
    message = blocked(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert "cannot verify who approved" in message


def test_fails_closed_when_it_cannot_check(project, state, tmp_path):
    rm = event("pre_tool_call", project, "terminal", {"command": "rm -rf photos"})
    assert "not JSON" in blocked(hook(b'{"hook_event_name": "pre_tool_call", "tool_na', state))
    assert "no tool_name" in blocked(hook({**rm, "tool_input": None}, state))
    bad_pin = _argv("hook", "hermes", "--state", str(state), "--supervisor", "SHA256:nope")
    assert "ARS could not check" in blocked(hook(rm, state, argv=bad_pin))
    assert "unknown argument" in blocked(hook(rm, state, argv=_argv("hook", "hermes", "--frobnicate")))
    # the state directory is a file: ARS cannot create the request, so the call is blocked, not run
    broken = tmp_path / "state-is-a-file"
    broken.write_text("x")
    message = blocked(hook(rm, broken, argv=_argv("hook", "hermes", "--state", str(broken))))
    assert "ARS could not check this tool call" in message
    # other events with a wrong command line: exit 1 and one line, no block (nothing to block)
    r = hook(event("post_tool_call", project, "terminal", {"command": "ls"}), state,
             argv=_argv("hook", "hermes", "--frobnicate"))
    assert r.returncode == 1 and r.stdout == b"" and len(r.stderr.decode().strip().splitlines()) == 1


def test_a_killed_hook_request_is_withdrawn_by_post_tool_call(project, state):
    """Hermes kills a hook at its timeout (and then runs the call): post_tool_call ends the request."""
    proc = hook_bg(event("pre_tool_call", project, "terminal", {"command": "rm -rf photos"}, call_id="call_k"), state)
    req = wait_for_request(state, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert Inbox(state).get(req.id).status == "pending"
    passed(hook(event("post_tool_call", project, "terminal", {"command": "rm -rf photos"}, call_id="call_k",
                      status="ok"), state))
    got = Inbox(state).get(req.id)
    assert got.status == "withdrawn" and "Hermes" in got.decision.note, got


def test_session_end_starts_the_ingest_of_hermes_home(project, state, tmp_path):
    home = tmp_path / "hermes-home"
    home.mkdir()
    env = {**env_without_ars(("ARS_", "HERMES_")), "HERMES_HOME": str(home)}
    r = subprocess.run(_hook_cmd(state), input=json.dumps(event("on_session_end", project)).encode(),
                       capture_output=True, timeout=60, env=env)
    assert r.returncode == 0 and r.stdout == b"" and b"no Hermes store" in r.stderr, r  # no state.db yet
    (home / "state.db").write_bytes(b"")
    r = subprocess.run(_hook_cmd(state), input=json.dumps(event("on_session_end", project)).encode(),
                       capture_output=True, timeout=60, env=env)
    assert r.returncode == 0 and r.stdout == b"", r
    log = (state / "hook-ingest.log").read_text()
    assert f"ingest {home / 'state.db'}" in log, log


# -- ars install hermes ---------------------------------------------------------------------------------
CONFIG = """\
# my Hermes settings: keep this comment
model:
  provider: custom   # the local server
  base_url: http://127.0.0.1:9/v1
hooks:
  pre_tool_call:
    - command: ~/bin/audit.sh
      matcher: terminal
mcp_servers:
  github:
    command: gh-mcp
"""


def test_install_merges_keeps_comments_backs_up_and_is_idempotent(tmp_path, state):
    home = tmp_path / "hh"
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG)
    dry = ars("install", "hermes", "--hermes-home", str(home), "--dry-run", state=state)
    assert dry.returncode == 0 and "+    - command:" in dry.stdout and "nothing was written" in dry.stdout
    assert (home / "config.yaml").read_text() == CONFIG and not (home / "shell-hooks-allowlist.json").exists()

    r = ars("install", "hermes", "--hermes-home", str(home), state=state)
    assert r.returncode == 0, r.stderr
    text = (home / "config.yaml").read_text()
    assert "# my Hermes settings: keep this comment" in text and "# the local server" in text
    from ruamel.yaml import YAML

    got = YAML(typ="safe").load(text)
    pin = signing.public_fingerprint(state)
    assert got["hooks"]["pre_tool_call"][0] == {"command": "~/bin/audit.sh", "matcher": "terminal"}
    ours = got["hooks"]["pre_tool_call"][1]
    assert ours["timeout"] == 300 and ours["command"].endswith(f"hook hermes --state {state} --supervisor {pin} "
                                                               "--timeout 300")
    assert {"post_tool_call", "on_session_end"} <= set(got["hooks"])
    assert got["mcp_servers"]["github"] == {"command": "gh-mcp"}
    assert got["mcp_servers"]["ars"]["args"][-4:] == ["--state", str(state), "--supervisor", pin]
    assert list(home.glob("config.yaml.bak-*"))[0].read_text() == CONFIG
    consent = json.loads((home / "shell-hooks-allowlist.json").read_text())
    assert {(a["event"], a["command"]) for a in consent["approvals"]} == \
        {(e, got["hooks"][e][-1]["command"]) for e in ("pre_tool_call", "post_tool_call", "on_session_end")}

    # ARS's memory provider: Hermes loads plugins/ars/ for memory.provider: ars
    assert got["memory"] == {"provider": "ars"}
    shipped = ROOT / "tui" / "agents" / "hermes_provider"
    for name in ("__init__.py", "ars_process.py", "plugin.yaml"):
        assert (home / "plugins" / "ars" / name).read_text() == (shipped / name).read_text()
    serve = json.loads((home / "plugins" / "ars" / "ars.json").read_text())
    assert serve["command"][-5:] == ["hook", "hermes", "--serve", "--state", str(state)], serve

    again = ars("install", "hermes", "--hermes-home", str(home), state=state)
    assert again.returncode == 0 and again.stdout.count("unchanged") == 6, again.stdout
    assert (home / "config.yaml").read_text() == text


def test_install_keeps_a_memory_provider_the_user_chose_and_says_how_to_switch(tmp_path, state):
    home = tmp_path / "hh"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: honcho  # mine\n")
    r = ars("install", "hermes", "--hermes-home", str(home), state=state)
    assert r.returncode == 0, r.stderr
    assert "memory.provider is 'honcho', left as it is" in r.stdout and "set memory.provider: ars" in r.stdout
    assert "provider: honcho  # mine" in (home / "config.yaml").read_text()
    (home / "config.yaml").write_text("memory: on\n")
    bad = ars("install", "hermes", "--hermes-home", str(home), state=state)
    assert bad.returncode == 2 and "memory is a str, not a mapping" in bad.stderr, bad.stderr


def test_install_says_when_the_hermes_on_path_cannot_speak_mcp(tmp_path, state):
    """Hermes without the `mcp` package offers no MCP tool and says nothing: the installer says it.
    Hermes' console script names its Python in its #! line; two of them here, one without the SDK."""
    home = tmp_path / "hh"
    home.mkdir()
    for python, has_mcp in (("/usr/bin/python3", False), (sys.executable, True)):
        bin_dir = tmp_path / ("with" if has_mcp else "without")
        bin_dir.mkdir()
        (bin_dir / "hermes").write_text(f"#!{python}\nprint('hermes')\n")
        (bin_dir / "hermes").chmod(0o755)
        env = {**env_without_ars(("ARS_", "HERMES_")), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        r = subprocess.run(_argv("install", "hermes", "--hermes-home", str(home), "--state", str(state)),
                           capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
        if has_mcp:
            assert "MCP support" not in r.stdout, r.stdout
        else:
            assert f"Hermes' Python ({python}) has no MCP support" in r.stdout
            assert f"{python} -m pip install 'hermes-agent[mcp]'" in r.stdout, r.stdout


def test_install_refuses_a_broken_config_and_writes_nothing(tmp_path, state):
    home = tmp_path / "hh"
    home.mkdir()
    for bad, why in (("model: [unclosed\n", "not valid YAML"), ("- a list\n", "not a mapping"),
                     ("hooks: [1, 2]\n", "hooks is a")):
        (home / "config.yaml").write_text(bad)
        r = ars("install", "hermes", "--hermes-home", str(home), state=state)
        assert r.returncode == 2 and why in r.stderr and "nothing was written" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert (home / "config.yaml").read_text() == bad
        assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def test_an_approval_the_agent_wrote_itself_is_refused_and_the_call_blocked(project, state):
    """The agent (same user) writes an unsigned approval into the inbox: the hook sets it
    aside loudly, waits on for the supervisor, and blocks when Hermes' time is up."""
    from core.inbox.models import InboxDecision
    from core.infra.once import create_once

    proc = hook_bg(event("pre_tool_call", project, "terminal", {"command": "rm -rf photos"}), state, timeout=12)
    req = wait_for_request(state, proc)
    forged = InboxDecision(verdict="approve", decided_by="agent@vm:1")
    assert create_once(state / "inbox" / f"{req.id}.decision.json", forged.model_dump_json().encode())
    out, err = proc.communicate(timeout=60)
    message = blocked(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert "REFUSED the approval" in err.decode() and "not signed" in message, (message, err)
    assert (state / "inbox" / f"{req.id}.refused.1.json").exists()
    assert Inbox(state).get(req.id).status == "expired"


def test_a_file_tool_reaching_into_a_custom_hermes_home_is_held(project, state, tmp_path):
    home = project / "hermes-home"  # inside the project, where a write would otherwise pass
    home.mkdir()
    env = {**env_without_ars(("ARS_", "HERMES_")), "HERMES_HOME": str(home)}
    ev = event("pre_tool_call", project, "write_file", {"path": str(home / "config.yaml"), "content": "hooks: {}"})
    r = subprocess.run(_hook_cmd(state, 7), input=json.dumps(ev).encode(), capture_output=True, timeout=60, env=env)
    assert "Hermes' home" in blocked(r)
    ev = event("pre_tool_call", project, "write_file", {"path": str(project / "notes.md"), "content": "x"})
    r = subprocess.run(_hook_cmd(state, 7), input=json.dumps(ev).encode(), capture_output=True, timeout=60, env=env)
    passed(r)
