"""``ars mcp`` over stdio: answer the handshake at once, then hand the wire to the SDK.

Agents wait a short while for their MCP servers when a session starts (Hermes
0.19: ``mcp_discovery_timeout``, 1.5 s; a server that misses it has no tools in
that session's first turn). Importing the MCP SDK alone takes ~0.5 s, ARS's
core another ~0.2 s, and twice that on a busy CPU. So this front, stdlib only,
starts with the process and

* answers ``initialize``, ``tools/list``, ``resources/list``,
  ``resources/templates/list``, ``prompts/list`` and ``ping`` from
  tui/agents/mcp_catalog.json: the SDK server's own answers, recorded from it
  (tui/agents/mcp_record.py; a test holds the two equal);
* then a thread imports the SDK, opens the state directory and builds the real
  server (tui/agents/mcp_server.py); requests it cannot answer itself
  (``tools/call``...) wait for it, in order;
* then hands over: the SDK gets the client's own ``initialize`` replayed under
  a private id (its answer is dropped: the client has one), and every line
  after it. From then on the SDK serves exactly as ``ars mcp`` always did.

A client that opens without ``initialize`` (the 2026 per-request envelope) is
served by the SDK alone, once loaded. Should the live server's tools differ
from the recorded ones (an edited server with a stale catalog), the client is
told ``notifications/tools/list_changed`` and asks again.

The wire: fd 0 and fd 1 are duplicated for the protocol, and the originals
pointed at /dev/null and stderr, so nothing an import or a handler prints can
corrupt a frame (what the SDK's own stdio transport does).
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from typing import Any, Callable

from tui.agents import mcp_catalog

PRIVATE_ID = "ars-front-initialize"  # the replayed initialize's id: its answer goes nowhere
LOAD_AFTER = 0.5  # s: the SDK starts loading by then even if the client is slow to finish its handshake


def _say(message: str) -> None:
    sys.stderr.write(f"ars mcp: {message}\n")
    sys.stderr.flush()


class Wire:
    """The protocol's own copies of stdin and stdout; one writer at a time."""

    def __init__(self, fd_in: int = 0, fd_out: int = 1):
        self.rfile = os.fdopen(os.dup(fd_in), "rb", buffering=1 << 16)
        self.wfile = os.fdopen(os.dup(fd_out), "wb", buffering=0)
        self._lock = threading.Lock()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, fd_in)
        os.close(null)
        os.dup2(2, fd_out)

    def close_output(self) -> None:
        """The client sees the end of the wire (EOF) now, not when a collector gets to
        the file object: in a process that goes on (a test, an embedding host) the
        client would wait on an open pipe."""
        with self._lock:
            self.wfile.close()

    def send(self, message: dict | str) -> None:
        data = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False,
                                                                     separators=(",", ":"))
        with self._lock:
            if self.wfile.closed:
                return  # serve has ended: nobody is listening
            self.wfile.write(data.encode("utf-8") + b"\n")


def negotiate(requested: Any, catalog: dict) -> str:
    """The protocol version the SDK answers an ``initialize`` with (mcp.server.runner)."""
    versions = catalog["handshake_versions"]
    return requested if requested in versions else versions[-1]


def initialize_result(params: dict, catalog: dict, version: str) -> dict:
    result = json.loads(json.dumps(catalog["initialize"]))  # a copy: the catalog serves every client
    result["protocolVersion"] = negotiate(params.get("protocolVersion"), catalog)
    result.setdefault("serverInfo", {})["version"] = version
    return result


class Front:
    """The handshake's answers until the SDK server is there (``serve``)."""

    def __init__(self, wire: Wire, catalog: dict | None, version: Callable[[], str]):
        self.wire = wire
        self.catalog = catalog
        self.version = version
        self.lines: "queue.Queue[tuple[str, Any]]" = queue.Queue()
        self.waiting: list[str] = []    # lines the SDK answers, in order
        self.opening: dict | None = None  # the client's initialize, replayed to the SDK
        self.fast = catalog is not None  # False: the SDK answers everything (no catalog, or not a handshake)
        self.answered: set[str] = set()  # methods answered from the catalog

    def read_forever(self) -> None:
        """The reader thread: every line from the client, then None at the end."""
        try:
            for line in self.wire.rfile:
                if line.strip():
                    self.lines.put(("line", line.decode("utf-8", "replace")))
        except (OSError, ValueError):
            pass
        finally:
            self.wire.rfile.close()  # only this thread reads it
        self.lines.put(("line", None))

    def take(self, line: str) -> None:
        """Answer ``line`` now, or keep it for the SDK."""
        if not self.fast:
            self.waiting.append(line)
            return
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if self.opening is None:
            if method != "initialize" or not isinstance(message.get("params"), dict) or "id" not in message:
                self.fast = False  # not the handshake: the SDK decides what this is
                self.waiting.append(line)
                return
            self.opening = message
            self.wire.send({"jsonrpc": "2.0", "id": message["id"],
                            "result": initialize_result(message["params"], self.catalog, self.version())})
            return
        if method == "notifications/initialized":
            return  # the replay carries its own
        if method == "ping" and "id" in message:
            self.wire.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return
        listing = method in self.catalog["results"] and not (message.get("params") or {}).get("cursor")
        if listing and "id" in message:
            self.answered.add(method)
            self.wire.send({"jsonrpc": "2.0", "id": message["id"], "result": self.catalog["results"][method]})
            return
        self.waiting.append(line)

    def prelude(self) -> list[str]:
        """What the SDK reads first: the client's initialize under the private id, then initialized."""
        if not self.fast or self.opening is None:
            return []
        replay = {**self.opening, "id": PRIVATE_ID}
        return [json.dumps(replay, ensure_ascii=False), json.dumps({"jsonrpc": "2.0",
                                                                    "method": "notifications/initialized"})]


def serve(load: Callable[[], tuple[Any, Callable[[], None]]], *, wire: Wire | None = None,
          catalog: "os.PathLike | None" = None) -> int:
    """Serve stdio: the front until ``load()`` returns (server, close), then the SDK.
    ``load`` raises ``Refused(code, line)`` for what a person must fix (said, exit code).
    ``catalog``: another recorded catalog than the shipped one."""
    wire = wire or Wire()
    try:
        return _serve(load, wire, catalog)
    finally:
        wire.close_output()


def _serve(load: Callable[[], tuple[Any, Callable[[], None]]], wire: Wire, catalog: "os.PathLike | None") -> int:
    # the loader thread imports for ~0.7 s holding the GIL; at the default 5 ms switch interval
    # each of the front's few steps waits behind it
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    front = Front(wire, mcp_catalog.load(catalog or mcp_catalog.CATALOG), mcp_catalog.server_version)
    threading.Thread(target=front.read_forever, daemon=True, name="ars-mcp-stdin").start()

    def loader() -> None:
        try:
            front.lines.put(("ready", load()))
        except BaseException as exc:  # noqa: BLE001 - said below, on the main thread
            front.lines.put(("failed", exc))

    # The loader starts once the handshake is answered (or when a line needs the SDK, or after
    # LOAD_AFTER s): on a busy CPU it would take the front's share of it, and the tools/call
    # it serves comes with the model's first answer, seconds later.
    start_by = time.monotonic() + LOAD_AFTER
    loading = False
    while True:
        if not loading and (front.waiting or "tools/list" in front.answered or not front.fast
                            or time.monotonic() >= start_by):
            threading.Thread(target=loader, daemon=True, name="ars-mcp-load").start()
            loading = True
        try:
            kind, item = front.lines.get(timeout=None if loading else max(0.0, start_by - time.monotonic()))
        except queue.Empty:
            continue
        if kind == "line":
            if item is None:
                return 0  # the client left before the server was ready: nothing to serve
            front.take(item)
        elif kind == "failed":
            return _failed(item)
        else:
            break
    server, close = item
    sys.setswitchinterval(switch)
    try:
        import anyio

        anyio.run(_handover, server, front)
    finally:
        close()
    return 0


class Refused(Exception):
    """``ars mcp`` cannot start: ``line`` says why, the process exits ``code``."""

    def __init__(self, code: int, line: str):
        super().__init__(line)
        self.code = code


def _failed(exc: BaseException) -> int:
    if isinstance(exc, Refused):
        sys.stderr.write(f"error: {exc}\n")
        return exc.code
    raise exc


def open_ars(state, supervisor: str | None):
    """The ARS ``ars mcp`` serves (tiers set up once), or Refused with the line to say."""
    from core.api import ARS, load_settings, pin_problem
    from tui.cli import error_map

    if supervisor is not None and pin_problem(supervisor):
        raise Refused(2, pin_problem(supervisor))
    try:
        settings = load_settings(state_dir=state)
    except Exception as exc:  # noqa: BLE001 - a malformed ARS_* variable: one line (else it rises)
        said = error_map.opening(exc)
        if said is None:
            raise
        raise Refused(*said) from None
    try:
        ars = ARS(settings, create=True)
    except Exception as exc:  # noqa: BLE001 - said in one line when it is ARS's (else it rises)
        said = error_map.said(exc)
        if said is None:
            raise
        raise Refused(*said) from None
    ars.supervisor_pin = supervisor  # from the command line the agent's settings snapshot: not the agent's to change
    try:
        ars.memory.prepare()  # tiers set up once, before the first call
    except Exception:  # noqa: BLE001 - a broken tier answers as such on each call
        pass
    return ars


def load_stdio(state, supervisor: str | None):
    """The loader ``serve`` runs in its thread: (the SDK server, what closes it)."""
    ars = open_ars(state, supervisor)
    try:
        from tui.agents.mcp_server import build_server

        return build_server(ars), ars.close
    except BaseException:
        ars.close()
        raise


def main(argv: list[str]) -> int | None:
    """``ars mcp [--state DIR] [--supervisor FP]`` without the typer CLI; None for any other
    command line (``--http``, ``--help``...: the typer command answers it)."""
    from tui.fast_args import parse

    got = parse(argv, options=("--state", "--supervisor"))
    if got is None or got.args:
        return None
    state, pin = got.options.get("--state"), got.options.get("--supervisor")
    return serve(lambda: load_stdio(state, pin))


class _Lines:
    """The SDK's stdin: the prelude, the lines that waited, then the reader thread's."""

    def __init__(self, front: Front):
        self.front = front
        self.ready = front.prelude() + front.waiting

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        if self.ready:
            return self.ready.pop(0)
        import anyio

        while True:
            kind, item = await anyio.to_thread.run_sync(self.front.lines.get, abandon_on_cancel=True)
            if kind != "line":
                continue
            if item is None:
                raise StopAsyncIteration
            return item


class _Out:
    """The SDK's stdout: the wire, less the answer to the replayed initialize."""

    def __init__(self, wire: Wire):
        self.wire = wire
        self.dropped = False

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if not self.dropped and PRIVATE_ID in line:
                try:
                    if json.loads(line).get("id") == PRIVATE_ID:
                        self.dropped = True
                        continue
                except ValueError:
                    pass
            self.wire.send(line)

    async def flush(self) -> None:
        pass


async def _handover(server, front: Front) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server  # what MCPServer.run_stdio_async runs, on our streams instead of fd 0/1
    async with anyio.create_task_group() as tg:
        if front.answered:
            tg.start_soon(_tell_if_stale, server, front)
        async with stdio_server(stdin=_Lines(front), stdout=_Out(front.wire)) as (read, write):
            await low.run(read, write, low.create_initialization_options())
        tg.cancel_scope.cancel()


async def _tell_if_stale(server, front: Front) -> None:
    """The catalog answered for a server it no longer matches: the client asks again."""
    from tui.agents.mcp_record import live_tools

    live = await live_tools(server)
    if live != front.catalog["results"]["tools/list"]:
        _say("tui/agents/mcp_catalog.json is stale (regenerate it: python -m tui.agents.mcp_record); "
             "the client is told to list the tools again")
        front.wire.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
