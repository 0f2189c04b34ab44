"""The mirror's ARS side against a real OpenClaw Gateway: when the supervisor decides
in ARS first, the plugin's ``resolveInOpenClaw`` (tui/agents/openclaw_plugin/mirror.js)
finds OpenClaw's pending plugin approval for the same tool call and resolves it, so
every OpenClaw surface shows it decided.

Real: ``openclaw gateway run`` (2026.9.6, token auth, loopback, a temporary HOME), an
approval client connected to it (tests/agents_stub/openclaw_approval_client.mjs, as
the Control UI would be: without one a plugin approval has no route and OpenClaw
denies it at once), a pending ``plugin.approval.request`` made with OpenClaw's own
CLI, and the plugin's function under Node 24. Skipped without OpenClaw except
under CI=true.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import env_without_ars
from test_openclaw_e2e import openclaw  # noqa: F401 - the fixture: OpenClaw installed, or fail/skip

ROOT = Path(__file__).resolve().parents[3]
NODE = ROOT / ".agents" / "bin" / "node"
CLIENT = ROOT / "tests" / "agents_stub" / "openclaw_approval_client.mjs"
MIRROR = ROOT / "tui" / "agents" / "openclaw_plugin" / "mirror.js"
TOKEN = "ars-test-gateway-token"

pytestmark = pytest.mark.timeout_budget


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_json_line(proc: subprocess.Popen, limit: float) -> dict:
    import select

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError("the approval client ended")
            return json.loads(line)
    raise AssertionError(f"no line from the approval client in {limit:g} s")


@pytest.fixture
def gateway(tmp_path: Path, openclaw: Path):  # noqa: F811
    home = tmp_path / "home"
    home.mkdir()
    port = free_port()
    env = env_without_ars(("ARS_", "OPENCLAW_"))
    env.update({"HOME": str(home), "OPENCLAW_GATEWAY_TOKEN": TOKEN, "NO_PROXY": "127.0.0.1,localhost"})
    log = tmp_path / "gateway.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([str(openclaw), "gateway", "run", "--allow-unconfigured", "--auth", "token",
                                 "--port", str(port), "--bind", "loopback"], env=env, stdout=fh, stderr=fh,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        ready = re.compile(r"\[gateway\](?:\x1b\[\d+m)?\s+(?:\x1b\[\d+m)?ready(?:\x1b\[\d+m)?\s*$", re.M)
        while not ready.search(log.read_text(errors="replace")):
            assert proc.poll() is None, f"the Gateway exited:\n{log.read_text(errors='replace')[-3000:]}"
            assert time.monotonic() < deadline, f"the Gateway was not ready in 120 s:\n{log.read_text()[-3000:]}"
            time.sleep(0.5)
        yield {"port": port, "env": env, "openclaw": openclaw, "log": log}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_decision_in_ars_settles_openclaws_pending_approval(gateway):
    url = f"ws://127.0.0.1:{gateway['port']}"
    client = subprocess.Popen([str(NODE), str(CLIENT), url, TOKEN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=gateway["env"])
    request = None
    try:
        hello = read_json_line(client, 30)
        assert hello.get("connected") is True, hello
        call_id = "call-ars-mirror-1"
        params = {"title": "ARS: Bash held (rm-rf)", "description": "Waiting in the ARS inbox as req-x",
                  "toolName": "exec", "toolCallId": call_id, "timeoutMs": 60_000, "twoPhase": True,
                  "allowedDecisions": ["allow-once", "deny"]}
        request = subprocess.Popen([str(gateway["openclaw"]), "gateway", "call", "plugin.approval.request",
                                    "--port", str(gateway["port"]), "--json", "--timeout", "50000",
                                    "--params", json.dumps(params)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=gateway["env"])
        requested = read_json_line(client, 60)
        assert requested["event"] == "plugin.approval.requested", requested
        approval_id = requested["payload"]["id"]
        assert requested["payload"]["request"]["toolCallId"] == call_id

        script = (f"import({json.dumps(MIRROR.as_uri())}).then(async (m) => {{"
                  f" const id = await m.resolveInOpenClaw({{url: {json.dumps(url)}, token: {json.dumps(TOKEN)}}},"
                  f" {json.dumps(call_id)}, 'allow-once'); console.log(JSON.stringify({{id}})); }})"
                  ".catch((e) => { console.error(e.message); process.exit(3); })")
        r = subprocess.run([str(NODE), "-e", script], capture_output=True, text=True, timeout=60, env=gateway["env"])
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["id"] == approval_id

        resolved = read_json_line(client, 30)
        assert resolved["event"] == "plugin.approval.resolved", resolved
        assert resolved["payload"]["id"] == approval_id and resolved["payload"]["decision"] == "allow-once"
        assert resolved["payload"].get("resolvedBy"), resolved  # OpenClaw's side shows who decided

        # no pending approval for that call is left to resolve twice
        again = subprocess.run([str(NODE), "-e", script], capture_output=True, text=True, timeout=60,
                               env=gateway["env"])
        assert again.returncode == 3 and "no pending OpenClaw approval" in again.stderr, again.stderr
    finally:
        client.kill()
        if request is not None:
            request.kill()
