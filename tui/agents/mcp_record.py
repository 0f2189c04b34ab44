"""Record ``ars mcp``'s handshake answers (tui/agents/mcp_catalog.json) from the real
server, through the very stdio path it serves on::

    python -m tui.agents.mcp_record

Imports the SDK; the front (tui/agents/mcp_front.py) uses ``live_tools`` only
after the handover, to tell a client when the shipped catalog was stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from tui.agents.mcp_catalog import CATALOG, CATALOG_METHODS


async def record(server) -> dict:
    """The catalog of ``server`` (an MCPServer): its answers over the stdio path."""
    from mcp.server.stdio import stdio_server
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    ask = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1], "capabilities": {},
                       "clientInfo": {"name": "ars-mcp-catalog", "version": "1"}}},
           {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    ask += [{"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(CATALOG_METHODS, 1)]
    out = _Collect()
    low = server._lowlevel_server
    wanted = {m["id"] for m in ask if "id" in m}
    feed = _Feed([json.dumps(m) for m in ask], lambda: wanted <= {m.get("id") for m in out.messages})
    async with stdio_server(stdin=feed, stdout=out) as (read, write):
        await low.run(read, write, low.create_initialization_options())
    by_id = {m.get("id"): m for m in out.messages}
    init = dict(by_id[0]["result"])
    init.pop("protocolVersion", None)
    init.get("serverInfo", {}).pop("version", None)  # the installed ARS's, filled in at run time
    results = {}
    for i, method in enumerate(CATALOG_METHODS, 1):
        if "result" in by_id.get(i, {}):
            results[method] = by_id[i]["result"]
    return {"handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS), "initialize": init, "results": results}


async def live_tools(server) -> dict:
    """``server``'s answer to tools/list now, in the catalog's form."""
    return (await record(server))["results"].get("tools/list")


class _Feed:
    """A finite stdin for the SDK's stdio transport: it ends once every request is answered
    (an end before that would cancel the answers still on their way)."""

    def __init__(self, lines: list[str], answered):
        self.lines = list(lines)
        self.answered = answered

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        import anyio

        if self.lines:
            return self.lines.pop(0)
        with anyio.move_on_after(10):
            while not self.answered():
                await anyio.sleep(0.005)
        raise StopAsyncIteration


class _Collect:
    def __init__(self):
        self.messages: list[dict] = []

    async def write(self, data: str) -> None:
        self.messages += [json.loads(line) for line in data.splitlines() if line.strip()]

    async def flush(self) -> None:
        pass


def write(path: Path = CATALOG) -> dict:
    """Record the catalog of the server ``ars mcp`` builds into ``path``."""
    import tempfile

    import anyio

    from core.api import ARS, load_settings
    from tui.agents.mcp_server import build_server

    with tempfile.TemporaryDirectory() as tmp, ARS(load_settings(state_dir=Path(tmp) / "state")) as ars:
        catalog = anyio.run(record, build_server(ars))
    path.write_text(json.dumps(catalog, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return catalog


if __name__ == "__main__":
    made = write()
    print(f"{CATALOG}: {len(made['results'].get('tools/list', {}).get('tools', []))} tools")
