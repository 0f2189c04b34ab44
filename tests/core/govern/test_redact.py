"""Secrets never enter memory (core/govern/redact.py and its call sites).

Real parts only: real ingests into real state directories, ``ars recall`` as a
real process, MCP recall through the SDK's client, the Claude Code hook as a
real process. The secrets are random strings in each provider's shape, made
per run. No assertion message prints a secret: checks name the kinds that
leaked and assert on placeholders.
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import Implementation

from core.api import ARS
from core.config import Settings
from core.govern import ds_patterns
from core.govern.redact import PLACEHOLDER_RE, redact, redact_episode
from core.inbox import Inbox, signing
from core.models import Entity, Episode
from conftest import env_without_ars

ROOT = Path(__file__).resolve().parents[3]
PASS = "the supervisor's passphrase"
R = random.Random()
ALNUM = string.ascii_letters + string.digits


@pytest.fixture(autouse=True)
def _seeded(request):
    """Each test draws its secrets from its own seed: random shapes, the same every run
    (a test that fails does so again; none flakes on an unlucky draw)."""
    R.seed(request.node.nodeid)


def rnd(n: int, chars: str = ALNUM) -> str:
    return "".join(R.choice(chars) for _ in range(n))


def leaks(text: str, secrets: dict[str, str], window: int = 12) -> list[str]:
    """The kinds of the secrets any ``window`` characters of which are in ``text``
    (a snippet cut mid-key leaks its start); never the secrets themselves."""
    def left(secret: str) -> bool:
        if len(secret) <= window:
            return secret in text
        return any(secret[i:i + window] in text for i in range(len(secret) - window + 1))
    return sorted(kind for kind, s in secrets.items() if left(s))


def make_secrets() -> dict[str, str]:
    return {
        "openai-key": "sk-proj-" + rnd(100, ALNUM + "-_"),
        "aws-access-key": "AKIA" + rnd(16, string.ascii_uppercase + string.digits),
        "aws-secret": rnd(40, ALNUM + "/+"),
        "github-token": "ghp_" + rnd(36),
        "private-key": base64.b64encode(R.randbytes(52)).decode(),  # a line of the key's body (70 characters)
        "postgres-password": rnd(12) + "!x9",
    }


# -- redact(): each kind ----------------------------------------------------------------------------
KINDS = [
    ("openai-key", lambda: "sk-proj-" + rnd(120, ALNUM + "-_"), "export OPENAI_API_KEY={s}"),
    ("openai-key", lambda: "sk-" + rnd(20) + "T3BlbkFJ" + rnd(20), "the old key {s} still works"),
    ("anthropic-key", lambda: "sk-ant-api03-" + rnd(93, ALNUM + "-_") + "AA", "ANTHROPIC_API_KEY={s}"),
    ("aws-access-key", lambda: "AKIA" + rnd(16, string.ascii_uppercase + string.digits), "key id {s} (CI user)"),
    ("aws-secret", lambda: rnd(40, ALNUM + "/+"), "aws_secret_access_key = {s}"),
    ("github-token", lambda: "ghp_" + rnd(36), "GITHUB_TOKEN={s} for the release"),
    ("github-token", lambda: "github_pat_" + rnd(22) + "_" + rnd(59), "fine-grained {s}"),
    ("gitlab-token", lambda: "glpat-" + rnd(20, ALNUM + "-_"), "clone with {s}"),
    ("slack-token", lambda: f"xoxb-{rnd(12, string.digits)}-{rnd(13, string.digits)}-{rnd(24, string.ascii_lowercase)}",
     "bot token {s}"),
    ("stripe-key", lambda: "sk_live_" + rnd(24), "STRIPE_SECRET_KEY={s}"),
    ("jwt", lambda: "eyJhbGciOiJIUzI1NiJ9." + base64.urlsafe_b64encode(b'{"sub":"42","n":"' + rnd(9).encode()
                                                                         + b'"}').decode().rstrip("=")
     + "." + rnd(43, ALNUM + "-_"), "cookie {s} expires tomorrow"),
    ("google-api-key", lambda: "AIza" + rnd(35, ALNUM + "-_"), "maps key {s}"),
    ("sendgrid-key", lambda: "SG." + rnd(22) + "." + rnd(43), "mail {s}"),
    ("npm-token", lambda: "npm_" + rnd(36), "//registry.npmjs.org/:_authToken={s}"),
    ("huggingface-token", lambda: "hf_" + rnd(34), "login --token {s}"),
    ("telegram-token", lambda: f"{R.randint(10**8, 10**9)}:{rnd(35, ALNUM + '-_')}", "bot {s}"),
    ("password", lambda: rnd(10) + "#4", "password = \"{s}\""),
    ("password", lambda: rnd(10) + "#4", "DB_PASSWORD={s}"),
    ("password", lambda: rnd(10) + "#4", "db:\n  password: {s}\n  host: db"),
    ("password", lambda: rnd(10) + "#4", "mysql -h db -u root -p{s} shop"),
    ("password", lambda: rnd(10) + "#4", "sshpass -p '{s}' ssh deploy@host"),
    ("password", lambda: rnd(10) + "#4", "docker login -u ci --password {s} registry"),
    ("password", lambda: rnd(10) + "#4", "the wifi password is {s}"),
    ("api-key", lambda: rnd(32, "0123456789abcdef"), "DATADOG_API_KEY={s}"),
    ("bearer-token", lambda: rnd(48), "Authorization: Bearer {s}"),
    ("high-entropy", lambda: rnd(36), "the signing secret is {s}"),
    ("private-key", lambda: "-----BEGIN OPENSSH PRIVATE KEY-----\n" + base64.b64encode(R.randbytes(300)).decode()
     + "\n-----END OPENSSH PRIVATE KEY-----", "here is the deploy key\n{s}\nput it on the runner"),
    ("private-key", lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + base64.b64encode(R.randbytes(200)).decode(),
     "cut off: {s}"),  # no END line: the base64 that follows goes too
]


@pytest.mark.parametrize("kind,make,template", KINDS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(KINDS)])
def test_each_kind_is_replaced_by_its_typed_placeholder(kind, make, template):
    secret = make()
    line = template.format(s=secret)
    r = redact(line)
    leaked = leaks(r.text, {kind: secret})  # kinds only: an assertion never shows a secret
    assert not leaked, r.findings
    assert f"[secret:{kind}]" in r.text, r.text
    assert kind in r.kinds
    # the words around it stay recallable
    for word in template.replace("{s}", " ").split():
        if len(word) > 3 and word.isalpha():
            assert word in r.text, (word, r.text)


def test_findings_give_kind_and_span_in_the_input():
    key = "ghp_" + rnd(36)
    text = f"token {key} then more"
    r = redact(text)
    (f,) = r.findings
    assert f.kind == "github-token" and text[f.start:f.end] == key
    assert r.text == "token [secret:github-token] then more"
    assert key not in repr(r)  # a repr in a failure message shows only the redacted text


def test_private_spans_are_dropped():
    assert redact("a <private>my address is 5 Main St</private> b").text == "a [private] b"
    assert redact("x <PRIVATE>\nline one\nline two\n</Private> y").text == "x [private] y"
    r = redact("before <private>never closed, to the end")
    assert r.text == "before [private]" and r.kinds == ["private"]
    # a secret inside a private span is one private span
    inside = redact(f"<private>sk-proj-{rnd(40)}</private>").text
    assert inside.count("[") == 1 and inside == "[private]"


def test_a_url_keeps_its_user_and_host_only_the_password_goes():
    pw = rnd(12) + "!x"
    one = redact(f"DATABASE_URL=postgres://app:{pw}@db:5432/x").text
    two = redact(f"redis://default:{pw}@cache:6379/0 and mysql://root:{pw}@127.0.0.1/shop").text
    leaked = leaks(one + two, {"password": pw})  # first: the comparisons below show the texts
    assert not leaked
    assert one == "DATABASE_URL=postgres://app:[secret:password]@db:5432/x"
    assert two == "redis://default:[secret:password]@cache:6379/0 and mysql://root:[secret:password]@127.0.0.1/shop"
    # no password: nothing to take
    for url in ("postgres://app@db:5432/x", "git@github.com:acme/api.git", "https://user@example.com/a",
                "https://example.com:8443/path?q=1"):
        assert redact(url).text == url


HARD_CLEAN = [
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the flaky test",
    "session 550e8400-e29b-41d4-a716-446655440000 resumed",
    "docker pull ghcr.io/acme/api@sha256:" + "4c2f3e1a0b9d8c7e" * 4,
    "echo " + base64.b64encode(b"hello world again").decode() + " | base64 -d",
    "src/core/ingest/formats/claude_code.py:120: in test_parse_claude_code_transcript",
    "frontend/src/components/UserProfile/UserProfileCard.tsx",
    "github.com/stretchr/testify v1.8.4 h1:" + base64.b64encode(bytes(range(32))).decode(),
    '"integrity": "sha512-' + base64.b64encode(bytes(range(64))).decode() + '"',
    "===== 412 passed, 3 skipped in 12.34s =====",
    "max_tokens = 4096",
    '    password = request.form["password"]',
    "    api_key: str = Field(default=\"\")",
    "secretName: db-credentials",
    "toolu_01A09q90qw90lq917835lq9aBcDeF returned",
    "Successfully installed fastapi-0.115.2 pydantic-2.9.1",
    "TestRedactAwsSecretKeyHandlerWithRotationPolicy passes now",
    "export AWS_PROFILE=staging AWS_REGION=eu-west-1",
    "Edit /private/var/folders/jv/1nszcffd0x74lysjsn_btj6w0000gn/T/pytest-of-pete/pytest-1/test_edit0/a.txt",
    "s3://acme-backups/postgres/2025/03/dump-1a2b3c4d.sql.gz",
    "the password is incorrect, says the login page",
    'echo "$CR_PAT" | docker login ghcr.io -u ci --password-stdin',
    "mysql -u root -p shop",
    "redis-cli -a $REDIS_PASSWORD ping",
    "psql --password --username app orders",
]


@pytest.mark.parametrize("line", HARD_CLEAN)
def test_technical_lines_without_a_secret_are_left_alone(line):
    r = redact(line)
    assert r.text == line and not r.findings, r.kinds


def test_redacting_is_idempotent():
    made = {f"{k}-{i}": m() for i, (k, m, _) in enumerate(KINDS)}
    text = "\n".join(t.format(s=made[f"{k}-{i}"]) for i, (k, _, t) in enumerate(KINDS))
    once = redact(text).text
    leaked = leaks(once, made)
    assert not leaked
    assert redact(once).text == once
    assert len(PLACEHOLDER_RE.findall(once)) >= len(KINDS) - 1  # the RSA key's two halves may join


def test_the_patterns_are_detect_secrets_own():
    """ds_patterns.py holds detect-secrets' tables as data (its import is slow); they
    must equal what the installed package has (regenerate: python -m core.govern.ds_patterns)."""
    import importlib.metadata

    assert importlib.metadata.version("detect-secrets") == ds_patterns.VERSION
    assert (ds_patterns.PROVIDERS, ds_patterns.PRIVATE_KEY_HEADERS, ds_patterns.KEYWORDS) == ds_patterns.from_package()


def test_an_episode_keeps_no_secret_in_any_field():
    key = "sk-proj-" + rnd(60)
    ep = Episode(id="e1", text=f"use OPENAI_API_KEY={key} now", summary=f"set the key {key}",
                 topics=["openai", key], entities=[Entity(name=key, type="concept"), Entity(name="openai")],
                 meta={"note": f"key={key}", "n": 3})
    out = redact_episode(ep)
    dumped = out.model_dump_json()
    leaked = leaks(dumped, {"openai-key": key})  # kinds only: an assertion never shows a secret
    assert not leaked
    assert "[secret:openai-key]" in out.text and [e.name for e in out.entities] == ["openai"]
    clean = Episode(id="e2", text="nothing to hide here", summary="plain")
    assert redact_episode(clean) is clean


# -- end to end: an ingested transcript ---------------------------------------------------------------
def transcript(path: Path, s: dict[str, str]) -> Path:
    """A Claude Code session whose messages hold the secrets, each line with the word zebracorn."""
    sid = "7a1c2e3f-0000-4000-8000-00000000beef"

    def line(i: int, kind: str, content) -> str:
        return json.dumps({"parentUuid": None if i == 0 else f"{sid[:-4]}{i - 1:04d}", "isSidechain": False,
                           "userType": "external", "cwd": "/home/dev/acme", "sessionId": sid, "version": "2.1.15",
                           "type": kind, "message": {"role": kind, "content": content},
                           "uuid": f"{sid[:-4]}{i:04d}", "timestamp": f"2026-11-30T10:0{i}:00.000Z"})

    body = [base64.b64encode(R.randbytes(52)).decode() for _ in range(4)]
    body.insert(1, s["private-key"])
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----"
    rows = [
        line(0, "user", f"zebracorn setup: my OpenAI key is {s['openai-key']} and the deploy key is\n{pem}"),
        line(1, "assistant", [{"type": "text", "text": "zebracorn: I will configure AWS with "
                                                       f"aws_access_key_id = {s['aws-access-key']} and "
                                                       f"aws_secret_access_key = {s['aws-secret']}"}]),
        line(2, "user", f"zebracorn push with GITHUB_TOKEN={s['github-token']} and the database at "
                        f"postgres://app:{s['postgres-password']}@db.internal:5432/orders"),
        line(3, "assistant", [{"type": "text", "text": "zebracorn: done, the migration ran against the orders "
                                                       "database"}]),
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def state_files_text(state: Path) -> str:
    """Every byte ARS wrote in the state directory (ledger, SQLite and its WAL, vectors...)."""
    out = []
    for p in sorted(state.rglob("*")):
        if p.is_file():
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def env() -> dict[str, str]:
    e = env_without_ars(("ARS_", "CLAUDE_"))
    e["ARS_DAEMON"] = "0"
    return e


def test_an_ingested_transcripts_secrets_are_nowhere_in_memory(tmp_path):
    s = make_secrets()
    (tmp_path / "acme").mkdir()
    src = transcript(tmp_path / "acme" / "session.jsonl", s)
    state = tmp_path / "state"
    with ARS(Settings(state_dir=state)) as a:
        report = a.ingest([src])
        assert report.episodes_added >= 1, report
    # the raw file still holds them (it is the agent's, not ARS's): the files tier must redact on the way out
    leaked = leaks(src.read_text(), s)  # kinds only: an assertion never shows a secret
    assert len(leaked) == 6

    stored = state_files_text(state)
    leaked = leaks(stored, s)  # kinds only: an assertion never shows a secret
    assert not leaked  # no secret, in any file ARS wrote...
    assert "zebracorn" in stored  # ...and the episodes are there
    for placeholder in ("[secret:openai-key]", "[secret:aws-access-key]", "[secret:aws-secret]",
                        "[secret:github-token]", "[secret:private-key]", "[secret:password]"):
        assert placeholder in stored, placeholder
    assert "postgres://app:[secret:password]@db.internal:5432/orders" in stored

    # ars recall, as a process
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "recall", "zebracorn", "--state", str(state), "--json",
                        "-k", "10"], capture_output=True, text=True, cwd=ROOT, env=env(), timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    leaked = leaks(r.stdout + r.stderr, s)  # kinds only: an assertion never shows a secret
    assert not leaked
    result = json.loads(r.stdout)
    assert result["hits"] and "[secret:" in r.stdout

    # the files tier alone, reading the raw session file
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "recall", "zebracorn", "--tiers", "files", "--state",
                        str(state), "--json", "-k", "10"], capture_output=True, text=True, cwd=ROOT, env=env(),
                       timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    files = json.loads(r.stdout)
    snippets = " ".join(h["snippet"] for t in files["tiers"] if t["tier"] == "files" for h in t["hits"])
    leaked = leaks(r.stdout, s)  # kinds only: an assertion never shows a secret
    assert not leaked
    assert "zebracorn" in snippets and "[secret:" in snippets  # it returned the secret-bearing lines, redacted

    # MCP recall and remember
    from tui.agents.mcp_server import build_server

    import anyio

    async def mcp() -> tuple[str, str]:
        with ARS(Settings(state_dir=state)) as a:
            async with Client(build_server(a), client_info=Implementation(name="pytest", version="1")) as c:
                got = await c.call_tool("recall", {"query": "zebracorn", "k": 10})
                kept = await c.call_tool("remember", {"text": f"zebracorn prod key is {s['openai-key']}",
                                                      "summary": f"key {s['openai-key']}"})
                again = await c.call_tool("recall", {"query": "zebracorn prod key", "k": 10})
        return json.dumps(got.structured_content), json.dumps(kept.structured_content) + json.dumps(
            again.structured_content)

    got, after = anyio.run(mcp)
    leaked = leaks(got + after, s)  # kinds only: an assertion never shows a secret
    assert not leaked
    assert "[secret:" in got
    assert "[secret:openai-key]" in after
    leaked = leaks(state_files_text(state), s)  # kinds only: an assertion never shows a secret
    assert not leaked  # remember stored it redacted

    # what Claude Code's hooks write and inject: Stop captures the turn (its checkpoint included),
    # SessionStart after a compaction gives the context of what the session was about
    project = tmp_path / "zebracorn"
    project.mkdir()

    def claude_hook(name: str, **fields) -> subprocess.CompletedProcess:
        event = {"session_id": "s-redact", "transcript_path": str(src), "cwd": str(project),
                 "hook_event_name": name, **fields}
        r = subprocess.run([sys.executable, "-m", "tui.cli.main", "hook", "claude-code", "--state", str(state)],
                           input=json.dumps(event), capture_output=True, text=True, cwd=ROOT, env=env(), timeout=120)
        assert r.returncode == 0, r.stderr[-500:]
        leaked = leaks(r.stdout + r.stderr, s)  # kinds only: an assertion never shows a secret
        assert not leaked
        return r

    claude_hook("Stop", stop_hook_active=False)
    assert list((state / "capture").glob("*.json"))
    leaked = leaks(state_files_text(state), s)  # kinds only: an assertion never shows a secret
    assert not leaked  # the capture checkpoint keeps the open part redacted
    ctx = json.loads(claude_hook("SessionStart", source="compact").stdout)["hookSpecificOutput"]["additionalContext"]
    if hasattr(ARS, "context"):  # the per-turn context engine (issue 30, h-context's part)
        assert "zebracorn" in ctx and "[secret:" in ctx


def test_re_ingesting_the_same_transcript_stores_nothing_twice(tmp_path):
    """Redaction is deterministic: the redacted episode compares equal to the stored one."""
    s = make_secrets()
    (tmp_path / "acme").mkdir()
    src = transcript(tmp_path / "acme" / "session.jsonl", s)
    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        first = a.ingest([src])
        again = a.ingest([src], force=True)  # read again, compared with what is stored
    assert first.episodes_added >= 1
    assert again.episodes_added == 0 and again.duplicates_skipped == first.episodes_added


# -- the inbox: shown redacted, signed over the exact input ------------------------------------------
def test_a_held_commands_secret_is_redacted_but_the_signature_covers_the_exact_input(tmp_path):
    state = tmp_path / "state"
    signing.init(state, PASS.encode())
    token = "ghp_" + rnd(36)
    command = f"curl -H 'Authorization: token {token}' -X DELETE https://api.github.com/repos/acme/api"
    with ARS(Settings(state_dir=state)) as a:
        req = a.request_approval("claude-code:s1", f"Claude Code Bash: {command}", details=command, risk="high",
                                 binds="Bash")
    stored = state_files_text(state)
    leaked = leaks(stored, {"github-token": token})  # kinds only: an assertion never shows a secret
    assert not leaked and "[secret:github-token]" in stored
    got = Inbox(state).get(req.id)
    assert "[secret:github-token]" in got.detail and "[secret:github-token]" in got.summary
    exact = signing.input_hash("Bash", command)  # what the hook computes from the real call
    assert got.exact_hash() == exact != signing.input_hash("Bash", got.detail)
    done = Inbox(state).decide(req.id, "approve", signer=signing.unlock(state, PASS.encode()),
                                shown=Inbox(state).get(req.id))
    payload, why = signing.verify_decision(done.decision.model_dump(mode="json"), pin=signing.public_fingerprint(state),
                                           request_id=req.id, input_hash=exact)
    assert payload is not None, why
    # another input (what the redacted text would hash to) is not what was signed
    assert signing.verify_decision(done.decision.model_dump(mode="json"), pin=signing.public_fingerprint(state),
                                   request_id=req.id, input_hash=signing.input_hash("Bash", got.detail))[0] is None


def test_a_detail_cut_to_fit_is_signed_over_the_whole_input(tmp_path):
    """The hook cuts a long input to fit the request and keeps the whole one aside:
    given ``exact``, the request's hash is of the whole input, not of what is shown."""
    full = "echo " + "x" * 20_000 + " && rm -rf build"
    shown = full[:1000] + "\n[... cut]"
    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        req = a.request_approval("claude-code:s1", "long command", details=shown, binds="Bash", exact=full)
        plain = a.request_approval("claude-code:s1", "short command", details="ls", binds="Bash")
    assert req.exact_hash() == signing.input_hash("Bash", full) != signing.input_hash("Bash", shown)
    assert plain.exact_hash() == signing.input_hash("Bash", "ls")


def test_the_hook_holds_a_command_with_a_secret_and_the_supervisors_approval_runs_it(tmp_path):
    """End to end through the real hook: the person sees the command redacted, signs, and the
    hook (which hashes the real input) answers allow."""
    state = tmp_path / "state"
    signing.init(state, PASS.encode())
    project = tmp_path / "proj"
    project.mkdir()
    pw = rnd(14) + "#7"
    command = f"psql postgres://admin:{pw}@db.internal:5432/orders -c 'DROP TABLE sessions'"
    event = {"session_id": "s-hold", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
             # bypassPermissions: PreToolUse holds it (in the prompting modes PermissionRequest does)
             "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": command, "description": "drop it"}, "tool_use_id": "toolu_01REDACT"}
    e = env()
    e["CLAUDE_PROJECT_DIR"] = str(project)
    pin = signing.public_fingerprint(state)
    feed = tmp_path / "event.json"
    feed.write_text(json.dumps(event))
    with open(feed, "rb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "tui.cli.main", "hook", "claude-code", "--state", str(state),
                                 "--supervisor", pin], stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=ROOT, env=e)
    inbox = Inbox(state)
    deadline = time.monotonic() + 90
    pending = []
    while time.monotonic() < deadline and not pending:
        pending = inbox.list("pending")
        if not pending:
            assert proc.poll() is None, "the hook ended before holding the call"
            time.sleep(0.05)
    assert pending, "no request was held"
    req = pending[0]
    leaked = leaks(req.detail + req.summary, {"password": pw})  # kinds only: an assertion never shows a secret
    assert "[secret:password]" in req.detail and not leaked
    from conftest import passphrase_socket

    r = passphrase_socket(PASS)
    try:
        d = subprocess.run([sys.executable, "-m", "tui.cli.main", "inbox", "approve", req.id, "--state", str(state),
                            "--passphrase-fd", str(r)], capture_output=True, text=True, cwd=ROOT, env=env(),
                           timeout=90, pass_fds=(r,), stdin=subprocess.DEVNULL)
    finally:
        os.close(r)
    assert d.returncode == 0, d.stderr[-400:]
    out, err = proc.communicate(timeout=90)
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow", answer
    leaked = leaks(state_files_text(state), {"password": pw})  # kinds only: an assertion never shows a secret
    assert not leaked
