"""``ars mcp``: the MCP server through real MCP clients (the SDK's ``mcp.Client``):
in process, over stdio to a real ``ars mcp`` process, and over streamable HTTP
with and without the bearer token. Approvals are decided by real ``ars inbox``
processes. No mocks of ARS; no timing assertions."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from core.api import ARS
from core.config import Settings
from core.inbox import Inbox, signing
from core.inbox.store import NobodyWaiting
from tui.agents.mcp_server import MAX_K, build_server
from conftest import env_without_ars, passphrase_pipe

ROOT = Path(__file__).resolve().parents[3]
SESSIONS = ROOT / "samples" / "sessions"
GOALS = ROOT / "samples" / "goals"
TOKEN = "test-token-0123456789abcdef"
PASS = "the supervisor's passphrase"  # every state here has a supervisor key: approvals are signed


def child_env(**extra: str) -> dict[str, str]:
    env = env_without_ars()
    env.update(extra)
    return env


def ars_cli(*args: str, state: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`ars ARGS`; a decision is made as the supervisor makes it: the passphrase on a pipe."""
    deciding = args[:1] == ("inbox",) and args[1:2] and args[1] in ("approve", "reject", "respond")
    with passphrase_pipe(PASS if deciding else None) as pp:
        return subprocess.run([sys.executable, "-m", "tui.cli.main", *args, "--state", str(state), *pp.args],
                              capture_output=True, text=True, cwd=ROOT, env=env or child_env(), timeout=timeout,
                              pass_fds=pp.fds, stdin=subprocess.DEVNULL)


def signer(state: Path):
    return signing.unlock(state, PASS.encode())


@pytest.fixture
def state(tmp_path) -> Path:
    d = tmp_path / "state"
    with ARS(Settings(state_dir=d)) as a:
        a.ingest([SESSIONS])
        a.supervisor_init(PASS.encode())
    return d


@pytest.fixture
def ars(state):
    a = ARS(Settings(state_dir=state))
    a.supervisor_pin = a.supervisor_fingerprint()  # as `ars mcp --supervisor FP` (written by ars install) pins it
    yield a
    a.close()


def client(ars: ARS, name: str = "pytest client") -> Client:
    return Client(build_server(ars), client_info=Implementation(name=name, version="1"))


def error_text(result) -> str:
    assert result.is_error, result
    text = result.content[0].text
    assert "\n" not in text, text  # one line, always
    return text


async def test_tools_are_listed_with_schemas_and_when_to_call_them(ars):
    async with client(ars) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        resources = (await c.list_resources()).resources
    assert set(tools) == {"recall", "explain", "get", "remember", "request_approval", "check_approval", "loops",
                          "request_forget", "startup_context"}
    for t in tools.values():
        assert t.description and len(t.description) > 80, t.name  # says when an agent should call it
        assert t.input_schema["type"] == "object"
    for name in ("recall", "explain", "remember", "request_approval", "check_approval", "loops"):
        assert tools[name].output_schema is not None, name  # structured results
    assert tools["recall"].input_schema["required"] == ["query"]
    assert "Call it before answering" in tools["recall"].description
    assert "before a risky" in tools["request_approval"].description
    assert tools["recall"].annotations.read_only_hint is True
    assert [str(r.uri) for r in resources] == ["ars://startup-context"]


async def test_recall_returns_the_recall_result(ars):
    async with client(ars) as c:
        r = await c.call_tool("recall", {"query": "neo4j outage", "k": 3})
        only = await c.call_tool("recall", {"query": "neo4j outage", "tiers": ["sqlite"]})
    assert not r.is_error
    out = r.structured_content
    assert out["query"] == "neo4j outage" and out["k"] == 3 and out["degraded"] is False
    assert 0 < len(out["hits"]) <= 3
    hit = out["hits"][0]
    assert {"episode_id", "score", "breakdown", "per_tier", "snippet", "matched_tokens"} <= set(hit)
    assert "sqlite" in hit["per_tier"] and hit["per_tier"]["sqlite"]["breakdown"]
    assert {t["tier"]: t["status"] for t in out["tiers"]}["sqlite"] == "ok"
    assert json.loads(r.content[0].text)["hits"][0]["episode_id"] == hit["episode_id"]  # text for older clients
    assert [t["tier"] for t in only.structured_content["tiers"]] == ["sqlite"]


async def test_recall_scope_filters_by_host_and_agent(ars):
    me = ars.identity.host
    async with client(ars) as c:
        mine = await c.call_tool("recall", {"query": "neo4j outage", "scope": f"host={me}"})
        nobody = await c.call_tool("recall", {"query": "neo4j outage", "scope": "host=elsewhere"})
        agent = await c.call_tool("recall", {"query": "neo4j outage", "scope": "agent=main"})
    assert not mine.is_error and mine.structured_content["hits"]
    assert all(h["origin"]["host"] == me for h in mine.structured_content["hits"])
    assert nobody.structured_content["hits"] == []
    hits = agent.structured_content["hits"]
    assert hits and all(h["origin"]["agent"] == "main" for h in hits)


@pytest.mark.parametrize("args, needle", [
    ({"query": ""}, "empty query"),
    ({"query": "   "}, "empty query"),
    ({"query": "?!"}, "no searchable words"),
    ({"query": "neo4j", "k": 0}, f"k must be between 1 and {MAX_K}"),
    ({"query": "neo4j", "k": MAX_K + 1}, f"k must be between 1 and {MAX_K}"),
    ({"query": "neo4j", "k": "many"}, "k: Input should be a valid integer"),
    ({"k": 3}, "query: Field required"),
    ({"query": "neo4j", "tiers": ["mongo"]}, "tiers.0: Input should be 'neo4j', 'sqlite' or 'files'"),
    ({"query": "neo4j", "scope": "team:platform"}, "scope part 'team:platform' is not agent=NAME or host=NAME"),
    ({"query": "neo4j", "scope": "colour=red"}, "scope part 'colour=red' is not agent=NAME or host=NAME"),
])
async def test_recall_errors_are_one_line_tool_errors(ars, args, needle):
    async with client(ars) as c:
        r = await c.call_tool("recall", args)
        assert needle in error_text(r)
        assert not (await c.call_tool("recall", {"query": "neo4j outage"})).is_error  # the server lives on


async def test_explain_and_its_errors(ars):
    async with client(ars) as c:
        hit = (await c.call_tool("recall", {"query": "neo4j outage"})).structured_content["hits"][0]
        r = await c.call_tool("explain", {"query": "neo4j outage", "episode_id": hit["episode_id"]})
        missing = await c.call_tool("explain", {"query": "neo4j outage", "episode_id": "claude-code:nope:0"})
        empty_id = await c.call_tool("explain", {"query": "neo4j outage", "episode_id": " "})
        empty_q = await c.call_tool("explain", {"query": "", "episode_id": hit["episode_id"]})
        bad_k = await c.call_tool("explain", {"query": "neo4j", "episode_id": hit["episode_id"], "k": -1})
    ex = r.structured_content
    assert ex["episode_id"] == hit["episode_id"] and ex["fused_rank"] == 1
    assert ex["verdict"].startswith("returned at fused rank 1")
    assert any(t["tier"] == "sqlite" and t["stored"] for t in ex["tiers"])
    assert "unknown episode 'claude-code:nope:0'" in error_text(missing)
    assert "episode_id is empty" in error_text(empty_id)
    assert "empty query" in error_text(empty_q)
    assert "k must be between" in error_text(bad_k)


async def test_get_returns_an_episode_whole_a_bounded_page_at_a_time(ars):
    text = "day 1: wrote boss_scraper.py and ran it. " + "output line. " * 900 + "抓取了 137 个产品经理职位"
    async with client(ars) as c:
        made = await c.call_tool("remember", {"text": text, "summary": "the scraper run", "session_id": "s-137"})
        episode_id = made.structured_content["episode_id"]
        first = await c.call_tool("get", {"episode_id": episode_id})
        pages = [first.structured_content]
        while pages[-1]["next_offset"] is not None:
            nxt = await c.call_tool("get", {"episode_id": episode_id, "offset": pages[-1]["next_offset"],
                                            "limit": 5000})
            pages.append(nxt.structured_content)
        unknown = await c.call_tool("get", {"episode_id": "hermes:nope"})
        huge = await c.call_tool("get", {"episode_id": episode_id, "limit": 10 ** 6})
        past = await c.call_tool("get", {"episode_id": episode_id, "offset": 10 ** 6})
    page = pages[0]
    assert page["episode_id"] == episode_id and page["session_id"] == "s-137" and page["summary"] == "the scraper run"
    assert page["chars"] == len(text) and len(page["text"]) == 6000 and page["offset"] == 0  # bounded
    assert page["first_ts"] and page["next_offset"] == 6000
    assert "".join(p["text"] for p in pages) == text and pages[-1]["text"].endswith("137 个产品经理职位")
    assert "unknown episode 'hermes:nope'" in error_text(unknown)
    assert "limit must be 1-20000" in error_text(huge)
    assert "past the end" in error_text(past)


def test_every_ars_tool_passes_the_gate_on_every_agent(ars):
    """ARS never holds its own tools: each one the server offers is on the gate's built-in allow-list
    (Hermes and Claude Code name them mcp__ars__<tool>; OpenClaw's hook maps to the same)."""
    from core.inbox.gate import Gate

    async def names():
        async with client(ars) as c:
            return [t.name for t in (await c.list_tools()).tools]

    gate = Gate.builtin()
    for name in anyio.run(names):
        assert not gate.check(f"mcp__ars__{name}", {"query": "x"}, project_dir="/tmp", cwd="/tmp"), name


async def test_remember_then_recall_finds_it(ars, state):
    text = "Decided: pin textual to 8.2.8 because the dashboard snapshot tests compare its pixels"
    async with client(ars) as c:
        r = await c.call_tool("remember", {"text": text, "summary": "pin textual 8.2.8",
                                           "topics": ["textual", "snapshots"], "session_id": "s-42"})
        again = await c.call_tool("remember", {"text": text, "summary": "pin textual 8.2.8",
                                               "topics": ["textual", "snapshots"], "session_id": "s-42"})
        found = await c.call_tool("recall", {"query": "pin textual snapshot pixels", "k": 3})
        empty = await c.call_tool("remember", {"text": "  "})
        huge = await c.call_tool("remember", {"text": "x" * (ARS.MAX_REMEMBER + 1)})
        bad_topics = await c.call_tool("remember", {"text": "ok", "topics": "one"})
    episode_id = r.structured_content["episode_id"]
    assert again.structured_content["episode_id"] == episode_id  # the same memory is stored once
    assert found.structured_content["hits"][0]["episode_id"] == episode_id
    assert "nothing to remember" in error_text(empty)
    assert f"over the {ARS.MAX_REMEMBER:,} limit" in error_text(huge)
    assert "topics: Input should be a valid list" in error_text(bad_topics)
    # written through the ledger like any ingest: a rebuild from the ledger keeps it
    with ARS(Settings(state_dir=state)) as other:
        other.rebuild()
        assert other.recall("pin textual snapshot pixels", k=1).hits[0].episode_id == episode_id


def approve_when_asked(state: Path, note: str, found: list, timeout: float = 60.0) -> threading.Thread:
    """A person at another terminal: waits for the request to show in the inbox, then
    runs `ars inbox approve ID --note NOTE` (a real process)."""

    def run():
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pending = Inbox(state).list("pending")
            if pending:
                r = ars_cli("inbox", "approve", pending[0].id, "--note", note, state=state)
                found.append((pending[0], r))
                return
            time.sleep(0.05)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


async def test_request_approval_waits_for_the_decision_from_ars_inbox_approve(ars, state):
    found: list = []
    person = approve_when_asked(state, "window is open", found)
    async with client(ars, name="Claude Code") as c:
        r = await c.call_tool("request_approval", {"action": "restart the prod API", "risk": "high",
                                                   "details": "kubectl rollout restart deploy/api", "wait_s": 60})
    person.join(5)
    req, cli = found[0]
    assert cli.returncode == 0, cli.stderr
    assert req.source == "mcp:Claude-Code" and req.kind == "approval" and req.risk == "high"
    assert req.summary == "restart the prod API" and req.detail == "kubectl rollout restart deploy/api"
    out = r.structured_content
    assert out["request_id"] == req.id and out["status"] == "approved" and out["note"] == "window is open"
    assert out["decided_by"] and out["decided_at"]


async def test_pending_after_wait_s_then_check_approval_sees_the_decision(ars, state):
    async with client(ars) as c:
        r = await c.call_tool("request_approval", {"action": "drop the staging table", "details": "DROP TABLE t",
                                                   "wait_s": 0.2})
        out = r.structured_content
        assert out["status"] == "pending" and out["decided_by"] == "" and out["decided_at"] is None
        still = await c.call_tool("check_approval", {"request_id": out["request_id"]})
        assert still.structured_content["status"] == "pending"
        rej = ars_cli("inbox", "reject", out["request_id"], "--reason", "not on a Friday", state=state)
        assert rej.returncode == 0, rej.stderr
        later = await c.call_tool("check_approval", {"request_id": out["request_id"]})
        assert later.structured_content["status"] == "rejected"
        assert later.structured_content["note"] == "not on a Friday"

        r2 = await c.call_tool("request_approval", {"action": "rotate the API key", "wait_s": 0})
        rid = r2.structured_content["request_id"]
        assert ars_cli("inbox", "approve", rid, state=state).returncode == 0
        assert (await c.call_tool("check_approval", {"request_id": rid})).structured_content["status"] == "approved"


async def wait_until(check, what: str, timeout: float = 120) -> None:
    """Poll ``check()`` until true; fail naming ``what`` (a safety net, not a timing assertion)."""
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.02)


async def test_a_hundred_waiting_approvals_leave_recall_answering_and_each_gets_its_decision(ars, state):
    """Waiting costs no thread (tui/agents/file_watch.py): with 100 request_approval calls
    waiting on one server, recall, explain and loops answer as they do without them, no
    worker thread is held, and every waiting call gets its own decision once it is decided
    through the store (half approved, half rejected, each with its own note)."""
    n = 100
    expected = [h.episode_id for h in ars.recall("neo4j outage", k=5).hits]
    assert expected
    server = build_server(ars)
    inbox = Inbox(state)
    answers: dict[int, object] = {}
    async with Client(server, client_info=Implementation(name="many agents", version="1")) as c:
        async def ask(i: int) -> None:
            answers[i] = await c.call_tool("request_approval", {"action": f"step {i}", "details": f"run step {i}",
                                                                "wait_s": 600})

        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(ask, i)
            await wait_until(lambda: server.watch.waiting == n, f"{n} request_approval calls waiting")
            pending = inbox.list("pending")
            assert len(pending) == n and not answers
            assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0  # no thread is held

            hits = await c.call_tool("recall", {"query": "neo4j outage", "k": 5})
            assert not hits.is_error
            assert [h["episode_id"] for h in hits.structured_content["hits"]] == expected
            why = await c.call_tool("explain", {"query": "neo4j outage", "episode_id": expected[0]})
            assert why.structured_content["fused_rank"] == 1
            assert (await c.call_tool("loops", {})).structured_content["loops"] == []
            assert not answers and server.watch.waiting == n  # all still waiting

            step = {int(r.summary.split()[1]): r.id for r in pending}
            assert sorted(step) == list(range(n))

            def decide() -> None:  # another process could do the same: the store is the file system
                key = signer(state)
                for i, rid in step.items():
                    inbox.decide(rid, "approve" if i % 2 == 0 else "reject", note=f"note {i}", by="pytest",
                                 signer=key, shown=inbox.get(rid))

            await anyio.to_thread.run_sync(decide)
            await wait_until(lambda: len(answers) == n, "every waiting call to answer its decision", 60)
    for i in range(n):
        out = answers[i].structured_content
        assert out["request_id"] == step[i], i
        assert out["status"] == ("approved" if i % 2 == 0 else "rejected"), out
        assert out["note"] == f"note {i}" and out["decided_by"].endswith("(pytest)"), out
    assert server.watch.waiting == 0


async def test_waiting_goes_on_when_the_polling_call_times_out_or_is_cancelled(ars, state):
    """One waiting call polls for all (the first one here); when it leaves, timed out or
    cancelled by its client, another takes over and still sees its decision. The cancelled
    call's request is withdrawn (nobody waits for it), the timed-out one stays pending."""
    server = build_server(ars)
    inbox = Inbox(state)
    results: dict[str, object] = {}
    async with Client(server) as c:
        async def ask(key: str, wait_s: float) -> None:
            results[key] = await c.call_tool("request_approval", {"action": key, "wait_s": wait_s})

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "short", 0.5)  # first to wait: it polls, then times out
            await wait_until(lambda: server.watch.waiting == 1, "the first call waiting")
            tg.start_soon(ask, "long", 600)
            await wait_until(lambda: "short" in results, "the short wait to end")
            assert results["short"].structured_content["status"] == "pending"

            async with anyio.create_task_group() as cancelled:  # the client gives up on a third call
                cancelled.start_soon(ask, "given up", 600)
                await wait_until(lambda: server.watch.waiting == 2, "the third call waiting")
                cancelled.cancel_scope.cancel()
            await wait_until(lambda: server.watch.waiting == 1, "the cancelled call to stop waiting")
            assert "given up" not in results
            [gone] = [r for r in inbox.list() if r.summary == "given up"]
            assert gone.status == "withdrawn" and "cancelled the call or disconnected" in gone.decision.note
            assert (await c.call_tool("check_approval", {"request_id": gone.id})).structured_content["status"] \
                == "withdrawn"
            with pytest.raises(NobodyWaiting, match=f"nobody is waiting for {gone.id}"):
                inbox.decide(gone.id, "approve")
            short_id = results["short"].structured_content["request_id"]
            assert inbox.get(short_id).status == "pending"  # check_approval may still pick it up

            [long] = [r for r in inbox.list("pending") if r.summary == "long"]
            await anyio.to_thread.run_sync(lambda: inbox.decide(long.id, "approve", note="go", signer=signer(state), shown=inbox.get(long.id)))
            await wait_until(lambda: "long" in results, "the long call to answer its decision", 60)
        out = results["long"].structured_content
    assert out["request_id"] == long.id and out["status"] == "approved" and out["note"] == "go"
    assert server.watch.waiting == 0


@pytest.mark.parametrize("tool, args, needle", [
    ("check_approval", {"request_id": "req-000000000000"}, "no inbox request 'req-000000000000'"),
    ("check_approval", {"request_id": "../../etc/passwd"}, "no inbox request"),
    ("request_approval", {"action": " ", "wait_s": 0}, "needs a summary"),
    ("request_approval", {"action": "x", "wait_s": 100000}, "wait_s must be between 0 and"),
    ("request_approval", {"action": "x", "risk": "extreme"}, "risk: Input should be 'low', 'medium' or 'high'"),
    ("request_approval", {"action": "x", "details": "d" * 1_000_000, "wait_s": 0}, "over the"),
    ("loops", {"status": "sleeping"}, "status: Input should be"),
    ("no_such_tool", {}, "no_such_tool"),
])
async def test_approval_and_loop_errors_are_tool_errors(ars, tool, args, needle):
    async with client(ars) as c:
        assert needle in error_text(await c.call_tool(tool, args))
        assert not (await c.call_tool("loops", {})).is_error


async def test_loops_startup_context_and_the_resource(ars):
    waiting = ars.loop_start(GOALS / "deploy-hotfix.json")
    assert waiting.status == "waiting_human"
    async with client(ars) as c:
        everything = (await c.call_tool("loops", {})).structured_content
        open_ = (await c.call_tool("loops", {"status": "open"})).structured_content
        done = (await c.call_tool("loops", {"status": "done"})).structured_content
        text = (await c.call_tool("startup_context", {})).content[0].text
        resource = (await c.read_resource("ars://startup-context")).contents[0]
    [lp] = everything["loops"]
    assert lp["loop_id"] == waiting.loop_id and lp["status"] == "waiting_human"
    assert lp["goal"] == waiting.goal.goal and lp["iteration"] == waiting.iteration and lp["step"]
    assert lp["pending"]["request_id"] == waiting.pending_approval.request_id and lp["pending"]["prompt"]
    assert [x["loop_id"] for x in open_["loops"]] == [waiting.loop_id] and done["loops"] == []
    assert text.startswith("# Startup Recovery Context") and waiting.loop_id in text
    assert resource.text.startswith("# Startup Recovery Context") and waiting.loop_id in resource.text
    assert resource.mime_type == "text/markdown"
    assert not (ars.state_dir / "startup-context.md").exists()  # reading it writes nothing


def test_the_server_loads_neither_textual_nor_neo4j_nor_openai(state):
    code = f"""
import sys, anyio
from pathlib import Path
from mcp import Client
import tui.cli.main
from core.api import ARS
from core.config import load_settings
from tui.agents.mcp_server import build_server

async def main():
    with ARS(load_settings(state_dir=Path({str(state)!r}))) as a:
        async with Client(build_server(a)) as c:
            for tool, args in [("recall", {{"query": "neo4j outage"}}), ("remember", {{"text": "a memory"}}),
                               ("loops", {{}}), ("startup_context", {{}}),
                               ("request_approval", {{"action": "x", "wait_s": 0}})]:
                assert not (await c.call_tool(tool, args)).is_error, tool
anyio.run(main)
print(" ".join(sys.modules))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=child_env(),
                       timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = {m.split(".")[0] for m in r.stdout.split()}
    assert not loaded & {"textual", "neo4j", "openai"}, loaded & {"textual", "neo4j", "openai"}


def test_importing_the_cli_loads_no_mcp():
    r = subprocess.run([sys.executable, "-c", "import sys, tui.cli.main; print(' '.join(sys.modules))"],
                       capture_output=True, text=True, cwd=ROOT, env=child_env(), check=True)
    loaded = {m.split(".")[0] for m in r.stdout.split()}
    assert not loaded & {"mcp", "mcp_types", "uvicorn", "starlette", "anyio"}


# -- real processes -----------------------------------------------------------------------
async def test_stdio_session_with_a_real_ars_mcp_process(state):
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui.cli.main", "mcp", "--state", str(state)],
                                   cwd=str(ROOT))
    async with Client(params) as c:
        first = await c.call_tool("recall", {"query": "neo4j outage", "k": 2})
        second = await c.call_tool("recall", {"query": "neo4j outage", "k": 2})
        bad = await c.call_tool("recall", {"query": ""})
    assert first.structured_content["hits"] and first.structured_content["hits"] == second.structured_content["hits"]
    assert "empty query" in error_text(bad)


async def test_a_stdio_client_that_goes_away_withdraws_its_waiting_request(state):
    """The agent's session ends (the client closes the pipe) while request_approval waits in a
    real ``ars mcp`` process: the request is withdrawn, so it leaves the pending list and a
    late approval is refused."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui.cli.main", "mcp", "--state", str(state)],
                                   cwd=str(ROOT), env=child_env())
    inbox = Inbox(state)
    async with anyio.create_task_group() as tg:
        async def agent() -> None:
            async with Client(params, client_info=Implementation(name="gone agent", version="1")) as c:
                await c.call_tool("request_approval", {"action": "force-push main", "wait_s": 600})

        tg.start_soon(agent)
        await wait_until(lambda: inbox.list("pending"), "the request to be pending")
        [req] = inbox.list("pending")
        tg.cancel_scope.cancel()  # the session closes: stdin shut, the process told to stop
    await wait_until(lambda: inbox.get(req.id).status != "pending", "the request to end", 30)
    ended = inbox.get(req.id)
    assert ended.status == "withdrawn" and "gone-agent" in ended.decision.note
    assert inbox.list("pending") == []
    r = ars_cli("inbox", "approve", req.id, state=state)
    assert r.returncode != 0 and f"nobody is waiting for {req.id}" in r.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """``ars mcp --http`` in a process of its own; stderr kept in a file."""

    def __init__(self, state: Path, tmp: Path, env: dict[str, str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.err_path = tmp / f"mcp-{self.port}.err"
        self.proc = subprocess.Popen([sys.executable, "-m", "tui.cli.main", "mcp", "--http", "--port", str(self.port),
                                      "--state", str(state)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=open(self.err_path, "w"))
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.stderr()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, self.stderr()
                time.sleep(0.1)

    def stderr(self) -> str:
        return self.err_path.read_text()

    def post(self, headers: dict[str, str]) -> int:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}})
        req = urllib.request.Request(self.url, data=body.encode(), method="POST", headers={
            "content-type": "application/json", "accept": "application/json, text/event-stream", **headers})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def http_recall(url: str, token: str | None):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            return await c.call_tool("recall", {"query": "neo4j outage", "k": 2})


async def test_http_with_the_token_works_and_without_it_is_refused(state, tmp_path):
    server = HttpServer(state, tmp_path, child_env(ARS_MCP_TOKEN=TOKEN))
    try:
        r = await http_recall(server.url, TOKEN)
        assert r.structured_content["hits"]
        assert server.post({}) == 401
        assert server.post({"Authorization": "Bearer wrong-token-0123456789"}) == 401
        assert server.post({"Authorization": f"Bearer {TOKEN}"}) == 200
        with pytest.raises(Exception):
            await http_recall(server.url, None)
    finally:
        server.close()
    assert TOKEN not in server.stderr() and not (state / "mcp-token").exists()


async def test_http_token_generated_0600_printed_once_and_reused(state, tmp_path):
    first = HttpServer(state, tmp_path, child_env())
    try:
        path = state / "mcp-token"
        token = path.read_text().strip()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(token) >= 32
        assert token in first.stderr()
        assert (await http_recall(first.url, token)).structured_content["hits"]
        assert first.post({}) == 401
    finally:
        first.close()
    second = HttpServer(state, tmp_path, child_env())
    try:
        assert token not in second.stderr() and str(path) in second.stderr()  # printed only once
        assert second.post({"Authorization": f"Bearer {token}"}) == 200
    finally:
        second.close()


async def test_an_http_client_that_goes_away_withdraws_its_waiting_request(state, tmp_path):
    """The same over streamable HTTP, the client leaving without ending its session (no DELETE)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    server = HttpServer(state, tmp_path, child_env(ARS_MCP_TOKEN=TOKEN))
    inbox = Inbox(state)
    try:
        async with anyio.create_task_group() as tg:
            async def agent() -> None:
                async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
                    async with Client(streamable_http_client(server.url, http_client=http, terminate_on_close=False),
                                      client_info=Implementation(name="http agent", version="1")) as c:
                        await c.call_tool("request_approval", {"action": "drop the prod table", "wait_s": 600})

            tg.start_soon(agent)
            await wait_until(lambda: inbox.list("pending"), "the request to be pending")
            [req] = inbox.list("pending")
            tg.cancel_scope.cancel()
        await wait_until(lambda: inbox.get(req.id).status != "pending", "the request to end", 30)
        ended = inbox.get(req.id)
        assert ended.status == "withdrawn" and "http-agent" in ended.decision.note
    finally:
        server.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.invalid"])
def test_non_loopback_bind_without_a_token_is_refused(tmp_path, host):
    state = tmp_path / "fresh"
    r = ars_cli("mcp", "--http", "--host", host, "--port", str(free_port()), state=state, timeout=60)
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert "not loopback" in line and "ARS_MCP_TOKEN" in line
    assert not state.exists()  # refused before anything was created


def test_bad_token_and_port_are_one_line_exit_2(tmp_path):
    r = ars_cli("mcp", "--http", state=tmp_path / "s", env=child_env(ARS_MCP_TOKEN="short"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "ARS_MCP_TOKEN is 5 characters" in r.stderr
    r = ars_cli("mcp", "--http", "--port", "70000", state=tmp_path / "s")
    assert r.returncode == 2 and "--port must be 1-65535" in r.stderr
    r = ars_cli("mcp", "--port", "9000", state=tmp_path / "s")
    assert r.returncode == 2 and "--host and --port are for --http" in r.stderr
    assert not (tmp_path / "s").exists()


def test_a_busy_port_is_one_line_exit_1(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = ars_cli("mcp", "--http", "--port", str(port), state=tmp_path / "s", env=child_env(ARS_MCP_TOKEN=TOKEN))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in r.stderr and "pick another --port" in r.stderr


async def test_an_approval_not_signed_by_the_pinned_key_is_unverified(ars, state, tmp_path):
    """The agent marks its own request approved (a decision file it writes, or one signed
    with a key it made): request_approval and check_approval say "unverified", never "approved"."""
    from core.inbox.models import InboxDecision
    from core.infra.once import create_once

    inbox = Inbox(state)
    async with client(ars) as c:
        first = (await c.call_tool("request_approval", {"action": "wipe the cache", "wait_s": 0})).structured_content
        d = InboxDecision(verdict="approve", decided_by="alice@laptop:1")
        assert create_once(inbox.decision_path(first["request_id"]), d.model_dump_json().encode())
        out = (await c.call_tool("check_approval", {"request_id": first["request_id"]})).structured_content
        assert out["status"] == "unverified" and "not signed by the supervisor's key" in out["note"], out

        second = (await c.call_tool("request_approval", {"action": "drop the db", "wait_s": 0})).structured_content
        own = tmp_path / "agent"
        signing.init(own, b"the agent's own passphrase")
        inbox.decide(second["request_id"], "approve", signer=signing.unlock(own, b"the agent's own passphrase"),
                     shown=inbox.get(second["request_id"]))
        out = (await c.call_tool("check_approval", {"request_id": second["request_id"]})).structured_content
        assert out["status"] == "unverified" and "another key" in out["note"], out
    # a server that pins no key trusts no approval
    ars.supervisor_pin = None
    third = inbox.create(source="mcp:x", kind="approval", summary="rotate keys", binds="mcp")
    inbox.decide(third.id, "approve", signer=signer(state), shown=inbox.get(third.id))
    async with client(ars) as c:
        out = (await c.call_tool("check_approval", {"request_id": third.id})).structured_content
    assert out["status"] == "unverified" and "no supervisor key is pinned" in out["note"], out
