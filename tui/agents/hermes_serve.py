"""``ars hook hermes --serve``: ARS for Hermes' memory provider, one process per Hermes.

ARS's memory provider (tui/agents/hermes_provider/, copied into
``$HERMES_HOME/plugins/ars/`` by ``ars install hermes``) runs inside Hermes' own
Python and cannot import ARS. It starts this process when Hermes builds its agent
and keeps it for as long as Hermes runs (its stdin closing ends it): every turn's
recall is then a line on a pipe to a warm ARS, not a Python start.

One request a line on stdin, ``{"id", "op", ...}``, one answer a line on stdout,
``{"id", ...}`` or ``{"id", "error": LINE}``; requests are answered concurrently
(a turn's recall never waits behind the previous turn's capture), writes one at a
time. The first line out is ``{"ready": true}`` once ARS is open, or
``{"ready": false, "error": LINE}`` (then every answer is that error).

* ``context`` ``{prompt, session, previous, turn, budget}``: ``ARS.context`` (what the
  turn's model gets, with its receipt in the ledger) -> ``{text, memories, latency_ms, note}``;
* ``capture`` ``{session, turn}``: ``ARS.capture_turn("hermes", ...)``, durable when it
  answers -> ``{episodes}``;
* ``recall`` ``{query, k}`` -> ``{hits}`` (the provider's ``ars_recall`` tool), and ``get``
  ``{episode_id, offset, limit}`` -> an episode's page (``ars_get``);
* ``end_session`` ``{session, hermes_home}``: the session's open inbox requests end, and
  ``ars ingest <hermes_home>/state.db`` starts detached (the catch-up; it adds nothing
  the captures already hold).

Until this ARS has ``ARS.context``/``ARS.capture_turn`` (h-context's, h-capture's), those
two answer an error the provider logs once; nothing breaks.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from tui.agents import hook_io

AGENT = "hermes"
WORKERS = 4
MAX_K = 20
SNIPPET = 600  # characters of a recall hit's snippet the tool returns


class Wire:
    """The protocol's own stdout (fd 1 is pointed at stderr: nothing else can corrupt a line)."""

    def __init__(self, rfile=None, fd_out: int = 1):
        self.rfile = rfile if rfile is not None else sys.stdin.buffer
        self.wfile = os.fdopen(os.dup(fd_out), "wb", buffering=0)
        if fd_out == 1:
            os.dup2(2, 1)
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        data = json.dumps(message, ensure_ascii=True, default=str).encode() + b"\n"
        with self._lock:
            try:
                self.wfile.write(data)
            except (OSError, ValueError):
                pass  # Hermes is gone: the read loop ends on its own


class Served:
    """The open ARS and what each op does with it."""

    def __init__(self, ars, state: str):
        self.ars = ars
        self.state = state
        self.writes = threading.Lock()
        fn = getattr(ars, "context", None)
        self.deadlines = fn is not None and "deadline" in inspect.signature(fn).parameters

    def prepare(self) -> None:
        """Recall's one-time set-up, before the first turn asks (``ARS.context_prepare``)."""
        fn = getattr(self.ars, "context_prepare", None)
        if fn is not None:
            fn()

    def context(self, req: dict) -> dict:
        fn = getattr(self.ars, "context", None)
        if fn is None:
            raise Unsupported("this ARS has no per-turn context (ARS.context): upgrade ARS")
        extra = {}
        deadline = req.get("deadline")
        if self.deadlines and isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0:
            extra["deadline"] = float(deadline)  # the provider's wait, less the way back
        got = fn(_text(req.get("prompt")), session=_opt(req.get("session")), agent=AGENT,
                 previous=_opt(req.get("previous")), budget=_int(req.get("budget")), turn=_opt(req.get("turn")),
                 **extra)
        return got.model_dump(mode="json") if hasattr(got, "model_dump") else dict(got)

    def capture(self, req: dict) -> dict:
        fn = getattr(self.ars, "capture_turn", None)
        if fn is None:
            raise Unsupported("this ARS cannot capture a turn yet (ARS.capture_turn): the session's ingest at its "
                              "end is the catch-up")
        turn = req.get("turn") if isinstance(req.get("turn"), dict) else {}
        with self.writes:
            return {"episodes": list(fn(AGENT, _text(req.get("session")) or "unknown", turn))}

    def recall(self, req: dict) -> dict:
        k = min(MAX_K, max(1, _int(req.get("k")) or 5))
        result = self.ars.recall(_text(req.get("query")), k=k)
        hits = []
        for h in result.hits:
            hit = h.model_dump(mode="json", include={"episode_id", "score", "snippet", "ts", "agent", "session_id"})
            hit["snippet"] = (hit.get("snippet") or "")[:SNIPPET]
            hits.append(hit)
        return {"hits": hits, "degraded": result.degraded}

    def get(self, req: dict) -> dict:
        page = self.ars.get(_text(req.get("episode_id")), offset=_int(req.get("offset")) or 0,
                            limit=_int(req.get("limit")))
        return page.model_dump(mode="json")

    def end_session(self, req: dict) -> dict:
        from tui.agents.held_call import end_session

        session = _text(req.get("session")) or "unknown"
        with self.writes:
            ended = end_session(self.state, session, "the Hermes session ended", _say)
        # the home Hermes runs with (the provider was told it: a profile has its own)
        home = _text(req.get("hermes_home")) or os.environ.get("HERMES_HOME") or os.path.expanduser("~/.hermes")
        db = os.path.join(os.path.abspath(home), "state.db")
        ingest = None
        if os.path.isfile(db):
            from tui.agents.claude_code import spawn_ingest

            ingest = spawn_ingest(self.state, db, fmt=None)
        return {"ended": ended, "ingest": ingest}


class Unsupported(Exception):
    pass


OPS = ("context", "capture", "recall", "get", "end_session")
_say = hook_io.sayer(AGENT)


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _opt(value) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def answer(served: Served | None, why_not: str, req: dict) -> dict:
    """The answer to one request (never raises)."""
    rid = req.get("id")
    op = req.get("op")
    if op == "ping":
        return {"id": rid, "ok": served is not None}
    if op not in OPS:
        return {"id": rid, "error": f"unknown op {str(op)[:40]!r} (ars hook hermes --serve knows {', '.join(OPS)})"}
    if served is None:
        return {"id": rid, "error": why_not}
    try:
        return {"id": rid, **getattr(served, op)(req)}
    except Unsupported as exc:
        return {"id": rid, "error": str(exc), "unsupported": True}
    except Exception as exc:  # noqa: BLE001 - one line back; the provider goes on without it
        from tui.cli import error_map

        said = error_map.said(exc)
        line = said[1] if said else f"{type(exc).__name__}: {exc}"
        if not said:
            _say(f"{op} failed: {' '.join(line.split())[:300]}")
        return {"id": rid, "error": " ".join(line.split())[:300]}


def open_ars(state: str):
    """The ARS to serve, or (None, the one line saying why not)."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if not os.path.isdir(state):
        return None, f"ARS's state directory {os.path.abspath(state)} does not exist (ars install hermes --state DIR)"
    from core.api import ARS, load_settings
    from tui.cli import error_map

    try:
        return ARS(load_settings(state_dir=state), create=False), ""
    except Exception as exc:  # noqa: BLE001 - said in one line; every answer is then that line
        said = error_map.opening(exc) or error_map.said(exc)
        return None, " ".join((said[1] if said else f"{type(exc).__name__}: {exc}").split())[:300]


def serve(state: str, pin: str | None, wire: Wire | None = None) -> int:
    """Answer the provider until its pipe closes."""
    wire = wire or Wire()
    ars, why_not = open_ars(state)
    served = Served(ars, state) if ars is not None else None
    if served is not None:
        try:
            served.prepare()  # before "ready": the first turn, which waits for it, gets a warm recall
        except Exception as exc:  # noqa: BLE001 - the first turn's deadline then says what is slow
            _say(f"recall's set-up failed: {type(exc).__name__}: {exc}")
    wire.send({"ready": served is not None, **({"error": why_not} if why_not else {})})
    if why_not:
        _say(why_not)
    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="ars-hermes")

    def one(line: bytes) -> None:
        try:
            req = json.loads(line)
        except ValueError:
            _say("a request that is not JSON; ignored")
            return
        if isinstance(req, dict):
            wire.send(answer(served, why_not, req))

    try:
        for line in wire.rfile:
            if line.strip():
                pool.submit(one, line)
    except (OSError, ValueError):
        pass
    finally:
        pool.shutdown(wait=True)  # a capture in flight is written before the process ends
        if ars is not None:
            ars.close()
    return 0
