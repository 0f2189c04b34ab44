"""A new request reaches the supervisor where they are: an HTTP POST from whichever
process made it (a hook, the MCP server's API, a loop), in JSON, ntfy's or Slack's
shape, with no secret in it, and never on the agent's time.

A real HTTP server on 127.0.0.1 receives the POSTs; the requests are made by the
real API, a real loop engine and a real `ars hook claude-code` process."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from core.api import ARS
from core.config import Settings
from core.inbox import notify, policy, signing
from loophelp import engine, goal

PASS = "the supervisor's passphrase"
SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH"


class Receiver:
    """An HTTP server that keeps every POST (path, headers, body) and answers ``status``."""

    def __init__(self, status: int = 200):
        got = self.got = []
        self.status = status
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                got.append((self.path, dict(self.headers), body))
                self.send_response(outer.status)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, n: int = 1, within: float = 20.0) -> list:
        deadline = time.monotonic() + within
        while len(self.got) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.got) >= n, f"{len(self.got)} POSTs received, {n} expected"
        return self.got

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def state(tmp_path) -> Path:
    s = tmp_path / "state"
    s.mkdir(mode=0o700)
    return s


def test_a_request_is_posted_as_json_without_its_secret(state, receiver, monkeypatch):
    monkeypatch.setenv("ARS_NOTIFY_URL", receiver.url + "/ars")
    with ARS(Settings(state_dir=state, embedder="off")) as a:
        t = time.monotonic()
        req = a.request_approval("mcp:cursor", "deploy with the key",
                                 f"OPENAI_API_KEY={SECRET} ./deploy.sh --prod", risk="high", expires_in=50)
        made = time.monotonic() - t
    [(path, headers, body)] = receiver.wait(1)
    msg = json.loads(body)
    assert path == "/ars" and headers["Content-Type"] == "application/json"
    assert msg["id"] == req.id and msg["source"] == "mcp:cursor" and msg["kind"] == "approval"
    assert msg["risk"] == "high" and msg["deadline"] == req.expires_at.isoformat()
    assert msg["runs"] == "OPENAI_API_KEY=[secret:openai-key] ./deploy.sh --prod"  # exactly what will run, redacted
    assert msg["decide"] == f"ars inbox approve {req.id}" and req.id in msg["text"]
    assert SECRET.encode() not in body
    assert made < 5, "the request is made without waiting for the receiver"  # generous: a sanity bound, not a bench


@pytest.mark.parametrize("fmt", ["ntfy", "slack"])
def test_ntfy_and_slack_shapes(state, receiver, monkeypatch, fmt):
    monkeypatch.setenv("ARS_NOTIFY_URL", receiver.url + "/my-topic")
    monkeypatch.setenv("ARS_NOTIFY_FORMAT", fmt)
    with ARS(Settings(state_dir=state, embedder="off")) as a:
        a.request_approval("claude-code:s1", "delete the build", "rm -rf build", risk="high")
    [(_path, headers, body)] = receiver.wait(1)
    if fmt == "ntfy":  # the body is the message, the title and priority are headers
        assert headers["Title"] == "ARS: approval from claude-code:s1" and headers["Priority"] == "high"
        assert body.decode().startswith("ARS: approval from claude-code:s1") and "rm -rf build" in body.decode()
    else:
        assert set(json.loads(body)) == {"text"} and "rm -rf build" in json.loads(body)["text"]


def test_the_format_follows_the_url():
    assert notify.format_of("https://ntfy.sh/ars-alerts") == "ntfy"
    assert notify.format_of("https://hooks.slack.com/services/T0/B0/x") == "slack"
    assert notify.format_of("https://example.com/hook") == "json"


def test_a_loop_waiting_for_a_person_is_posted(state, receiver, monkeypatch, tmp_path):
    monkeypatch.setenv("ARS_NOTIFY_URL", receiver.url)
    eng = engine(state)
    g = goal([{"action": "restart the backup daemon", "tool": "shell",
               "args": {"cmd": f"PGPASSWORD=Sup3rS3cretPw echo restarted >> {tmp_path / 'out'}"}}])
    s = eng.run(eng.create(g).loop_id)
    eng.memory.close()
    assert s.status == "waiting_human"
    [(_p, _h, body)] = receiver.wait(1)
    msg = json.loads(body)
    assert msg["source"] == "loop" and msg["id"] == f"loop:{s.loop_id}:{s.pending_approval.request_id}"
    assert b"Sup3rS3cretPw" not in body and "[secret:" in msg["runs"], msg["runs"]


def test_the_hook_posts_its_held_call(state, receiver, tmp_path):
    from conftest import env_without_ars

    signing.init(state, PASS.encode())
    project = tmp_path / "p"
    project.mkdir()
    env = env_without_ars(("ARS_", "CLAUDE_"))
    env["ARS_NOTIFY_URL"] = receiver.url
    ev = {"session_id": "s-notify", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
          "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Bash",
          "tool_input": {"command": "rm -rf build"}, "tool_use_id": "toolu_N"}
    cmd = [str(Path(os.sys.executable).parent / "ars"), "hook", "claude-code", "--state", str(state),
           "--supervisor", signing.public_fingerprint(state)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(json.dumps(ev).encode())
    proc.stdin.close()
    try:
        [(_p, _h, body)] = receiver.wait(1)
        msg = json.loads(body)
        assert msg["source"] == "claude-code:s-notify" and msg["runs"] == "rm -rf build" and msg["deadline"]
        assert proc.poll() is None, "the hook still waits for the supervisor"
    finally:
        proc.kill()
        proc.wait()


def test_the_signed_policy_names_the_url_and_an_unsigned_one_does_not(state, receiver):
    signing.init(state, PASS.encode())
    text = f'timeout = 50\n[notify]\nurl = "{receiver.url}/from-policy"\n'
    policy.sign(state, text, signing.unlock(state, PASS.encode()))
    with ARS(Settings(state_dir=state, embedder="off")) as a:
        a.request_approval("mcp:x", "one", "echo one")
    [(path, _h, _b)] = receiver.wait(1)
    assert path == "/from-policy"
    # the agent rewrites gate.toml to send the requests elsewhere: unsigned, not used (the last good one holds)
    (state / "gate.toml").write_text(f'timeout = 50\n[notify]\nurl = "{receiver.url}/agent"\n')
    with ARS(Settings(state_dir=state, embedder="off")) as a:
        a.request_approval("mcp:x", "two", "echo two")
    receiver.wait(2)
    time.sleep(0.5)
    assert [p for p, _h, _b in receiver.got] == ["/from-policy", "/from-policy"]


@pytest.mark.parametrize("bad, words", [
    ('[notify]\nurl = "ftp://x"\n', "http:// or https://"),
    ('[notify]\nurl = "https://x"\nformat = "xml"\n', "format 'xml'"),
    ('[notify]\nurl = "https://x"\nchannel = "#ops"\n', "unknown key 'channel'"),
    ('notify = "https://x"\n', "must be a table"),
])
def test_a_bad_notify_table_is_one_line(bad, words):
    from core.inbox.gate import Gate, GateError

    with pytest.raises(GateError) as e:
        Gate.parse("timeout = 50\n" + bad, "gate.toml")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_refusing_receiver_is_logged_once_and_nothing_else_changes(state, monkeypatch):
    r = Receiver(status=403)
    try:
        monkeypatch.setenv("ARS_NOTIFY_URL", r.url)
        with ARS(Settings(state_dir=state, embedder="off")) as a:
            req = a.request_approval("mcp:x", "one", "echo one")
            r.wait(1)
            deadline = time.monotonic() + 20
            while not (state / "notify.log").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            log = (state / "notify.log").read_text()
            assert f"{req.id}: not delivered" in log and "HTTP 403" in log
            assert len(r.got) == 1, "a 4xx is not retried"
            assert a.inbox.get(req.id).status == "pending"
    finally:
        r.close()


def test_an_expiry_is_posted_too_with_a_link_to_the_page(state, receiver, monkeypatch):
    """Nothing ends silently: a request its agent gave up on is told where new ones are, saying nothing
    ran; every message links to the approvals page (without its token: a browser holds that)."""
    monkeypatch.setenv("ARS_NOTIFY_URL", receiver.url + "/ars")
    (state / "serve").mkdir(mode=0o700)
    (state / "serve" / "url").write_text("http://127.0.0.1:8765/\n")
    with ARS(Settings(state_dir=state, embedder="off")) as a:
        req = a.request_approval("claude-code:s1", "Bash: terraform apply", "terraform apply", risk="high",
                                 binds="Bash", expires_in=60)
        receiver.wait(1)
        assert a.inbox_end(req.id, "expire", "the Claude Code hook waited 50 s and gave up")
        assert not a.inbox_end(req.id, "expire", "again")  # once: the second ending is not news
    first, second = (json.loads(b) for _p, _h, b in receiver.wait(2)[:2])
    assert first["event"] == "inbox.request" and first["page"] == f"http://127.0.0.1:8765/#card-{req.id}"
    assert first["page"] in first["text"] and "token" not in first["text"]
    assert second["event"] == "inbox.expired" and second["id"] == req.id and second["decide"] == ""
    assert second["text"].startswith("ARS: expired, nobody decided: approval from claude-code:s1")
    assert "gave up" in second["text"] and "nothing ran" in second["text"] and second["page"] in second["text"]
    time.sleep(0.5)
    assert len(receiver.got) == 2
