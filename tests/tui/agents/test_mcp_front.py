"""``ars mcp``'s front (tui/agents/mcp_front.py): the handshake answered from the
recorded catalog while the SDK and ARS load, then the SDK serving the same wire.

In process, the front runs over real pipes with a loader held back by a test, so
"answered before the server existed" is shown by order, never by a clock; over
stdio, a real ``ars mcp`` process (the console script's fast path) serves the
SDK's own client. No timing assertions (bench/mcp_start.py measures)."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from core.api import ARS
from core.config import Settings
from tui.agents import mcp_catalog, mcp_front, mcp_record
from tui.agents.mcp_server import build_server
from conftest import env_without_ars

ROOT = Path(__file__).resolve().parents[3]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "hermes", "version": "1"}}}


@pytest.fixture
def ars(tmp_path):
    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        a.remember("the restart of the gateway ran at 20:08, approved by the supervisor", session_id="s1")
        yield a


def test_the_recorded_catalog_is_what_the_server_answers(ars):
    recorded = mcp_catalog.load()
    assert recorded is not None, "tui/agents/mcp_catalog.json is missing or damaged"
    live = anyio.run(mcp_record.record, build_server(ars))
    assert live == recorded, "stale catalog: regenerate it with python -m tui.agents.mcp_record"


class Pipes:
    """The client's ends of a front running in a thread over real pipes."""

    def __init__(self, loader, catalog: Path | None = None):
        r_in, self.w_in = os.pipe()
        self.r_out, w_out = os.pipe()
        wire = mcp_front.Wire(r_in, w_out)  # dups the two ends, then points them at /dev/null and stderr
        os.close(r_in)
        os.close(w_out)
        self.out = os.fdopen(self.r_out, "rb")
        self.code: list[int] = []
        self.thread = threading.Thread(
            target=lambda: self.code.append(mcp_front.serve(loader, wire=wire, catalog=catalog)), daemon=True)
        self.thread.start()

    def send(self, message: dict) -> None:
        os.write(self.w_in, (json.dumps(message) + "\n").encode())

    def read(self) -> dict:
        line = self.out.readline()
        assert line, "the front closed the wire"
        return json.loads(line)

    def close(self) -> int:
        os.close(self.w_in)
        self.thread.join(30)
        assert not self.thread.is_alive(), "the front did not end when the client left"
        # the front closed its end: the rest ends at once (a copy left open would hang the read)
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(self.out.read()), daemon=True)
        reader.start()
        reader.join(30)
        assert got, "the front's end of the wire stayed open after it ended"
        rest = got[0]
        self.out.close()
        assert PRIVATE not in rest.decode(), rest  # the replayed initialize's answer never reaches the client
        return self.code[0]


PRIVATE = mcp_front.PRIVATE_ID


def test_handshake_answered_before_the_server_exists_then_the_sdk_serves(ars):
    release, entered = threading.Event(), threading.Event()

    def loader():
        entered.set()
        assert release.wait(60), "never released"
        return build_server(ars), lambda: None

    p = Pipes(loader)
    p.send(INIT)
    init = p.read()
    assert init["id"] == 1 and init["result"]["protocolVersion"] == "2025-06-18"
    assert init["result"]["serverInfo"]["name"] == "ars" and init["result"]["serverInfo"]["version"]
    p.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    p.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = p.read()
    assert tools["id"] == 2 and "get" in [t["name"] for t in tools["result"]["tools"]]
    p.send({"jsonrpc": "2.0", "id": "r", "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "gateway restart", "k": 1, "tiers": ["sqlite"]}}})
    p.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert p.read() == {"jsonrpc": "2.0", "id": 3, "result": {}}  # answered while the call waits for the server
    assert entered.wait(30) and not release.is_set()  # all of the above while the loader was held
    release.set()
    called = p.read()
    assert called["id"] == "r" and not called["result"].get("isError"), called
    assert "20:08" in called["result"]["structuredContent"]["hits"][0]["snippet"]
    # after the handover the SDK answers everything, the list methods too
    p.send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    assert p.read()["result"] == tools["result"]
    assert p.close() == 0


def test_an_unknown_protocol_version_gets_the_sdks_counter_offer(ars):
    p = Pipes(lambda: (build_server(ars), lambda: None))
    p.send({**INIT, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}})
    assert p.read()["result"]["protocolVersion"] == mcp_catalog.load()["handshake_versions"][-1]
    assert p.close() == 0


def test_a_stale_catalog_tells_the_client_to_list_the_tools_again(ars, tmp_path):
    stale = mcp_catalog.load()
    stale["results"]["tools/list"]["tools"] = stale["results"]["tools/list"]["tools"][:1]
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(stale))
    p = Pipes(lambda: (build_server(ars), lambda: None), catalog=path)
    p.send(INIT)
    p.read()
    p.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert len(p.read()["result"]["tools"]) == 1
    assert p.read() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    p.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert len(p.read()["result"]["tools"]) > 1  # the SDK's own answer now
    assert p.close() == 0


def test_a_loader_that_refuses_says_one_line_and_exits_with_its_code(capfd):
    def loader():
        raise mcp_front.Refused(2, "ARS_NEO4J_URI is not a URI: fix it")

    p = Pipes(loader)
    p.thread.join(30)
    assert p.code == [2]
    os.close(p.w_in)
    p.out.close()
    assert "error: ARS_NEO4J_URI is not a URI: fix it" in capfd.readouterr().err


async def test_a_real_ars_mcp_process_serves_the_sdk_client(tmp_path):
    state = tmp_path / "state"
    with ARS(Settings(state_dir=state)) as a:
        a.remember("抓取了 137 个产品经理职位 (boss_scraper.py, day 1)", session_id="day1")
    script = Path(sys.executable).parent / "ars"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "tui.entry"]
    params = StdioServerParameters(command=command[0], args=command[1:] + ["mcp", "--state", str(state)],
                                   cwd=str(ROOT), env=env_without_ars())
    async with Client(params) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        hit = (await c.call_tool("recall", {"query": "产品经理职位", "k": 1})).structured_content["hits"][0]
        whole = (await c.call_tool("get", {"episode_id": hit["episode_id"]})).structured_content
    assert "get" in names and "recall" in names
    assert "137" in whole["text"] and whole["session_id"] == "day1" and whole["next_offset"] is None


def test_bad_arguments_go_to_the_typer_command(tmp_path):
    import subprocess

    r = subprocess.run([sys.executable, "-m", "tui.entry", "mcp", "--bogus"], capture_output=True, text=True,
                       cwd=ROOT, env=env_without_ars(), timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "--bogus" in r.stderr, r.stderr
