"""``ars hook openclaw --serve``: the long-lived process ARS's OpenClaw plugin starts
once per OpenClaw process. One JSON request a line on stdin, one answer a line on
stdout, matched by ``id``:

* ``{"id", "tool", "params", "cwd", "project", "paths"}`` (or ``"op": "check"``):
  the gate, answered at once on this thread: ``{"id", "verdict": "pass"|"hold",
  "reason"}``. Only the gate's modules are loaded for it (a tool call that passes
  costs milliseconds); a held call goes to the one-shot ``ars hook openclaw``.
* ``{"id", "op": "context"|"capture"|"outcome"|"search"|"get"|"startup", ...}``:
  memory (tui/agents/openclaw_memory.py), answered by one worker thread that keeps
  one ARS open, in the order asked. A ``context`` request carries ``timeout_ms``:
  one still waiting for the worker past it is answered ``{"id", "late": true}``
  without a recall (the plugin has already let the turn go on without it).

When the worker has opened ARS and paid a first recall it prints ``{"ready": true,
"warm_ms"}``. At the end of stdin (OpenClaw exits) the captures already asked for
are finished, within ``CLOSE_WAIT`` seconds, before the process exits: a turn's
capture is not lost to the agent's own exit.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Callable

CLOSE_WAIT = 30.0  # s: at the end of stdin, how long the queued memory work may still take
MEMORY_OPS = ("context", "capture", "outcome", "search", "get", "startup")


class Lines:
    """One JSON line at a time on stdout, from either thread."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.lock = threading.Lock()

    def __call__(self, payload: dict) -> None:
        text = json.dumps(payload, ensure_ascii=False) + "\n"
        with self.lock:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):
                pass  # the plugin went away: nobody to tell


def serve(state: str, pin: str | None, stream, *, check: Callable, say: Callable[[str], None],
          startup: Callable, out: Lines | None = None) -> int:
    out = out or Lines()
    work: queue.Queue = queue.Queue()
    worker = threading.Thread(target=_work, args=(state, work, out, say, startup), daemon=True,
                              name="ars-openclaw-memory")
    worker.start()
    for line in stream:
        if not line.strip():
            continue
        rid = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("not an object")
            rid = req.get("id")
            op = req.get("op") or "check"
            if op in MEMORY_OPS:
                work.put((time.monotonic(), req))
                continue
            if op != "check":
                out({"id": rid, "error": f"unknown op {str(op)[:40]!r}"})
                continue
            _, matches, _, _ = check(req, state, pin)
            out({"id": rid, "verdict": "hold", "reason": matches[0].reason} if matches else
                {"id": rid, "verdict": "pass"})
        except Exception as exc:  # noqa: BLE001 - the one-shot hold decides (and blocks on failure)
            out({"id": rid, "verdict": "hold", "reason": f"ARS could not check it here ({type(exc).__name__})"})
    work.put(None)
    worker.join(CLOSE_WAIT)
    return 0


def _work(state: str, work: queue.Queue, out: Lines, say: Callable[[str], None], startup: Callable) -> None:
    from tui.agents import openclaw_memory as mem

    keeper = mem.Keeper(state, say)
    ops = {"context": mem.context, "capture": mem.capture, "outcome": mem.outcome, "search": mem.search,
           "get": mem.get, "startup": lambda k, req: {"context": startup(req, state, k.ars())}}
    started = time.perf_counter()
    try:
        keeper.warm()
    except Exception as exc:  # noqa: BLE001 - each request says its own failure
        say(f"warming ARS up failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    out({"ready": True, "warm_ms": round((time.perf_counter() - started) * 1000, 1)})
    try:
        while True:
            item = work.get()
            if item is None:
                return
            arrived, req = item
            rid, op = req.get("id"), req["op"]
            limit = req.get("timeout_ms")
            if op == "context" and isinstance(limit, (int, float)) and not isinstance(limit, bool):
                req["left_s"] = limit / 1000 - (time.monotonic() - arrived)
                if req["left_s"] <= 0:
                    out({"id": rid, "late": True})
                    continue
            try:
                out({"id": rid, **ops[op](keeper, req)})
            except Exception as exc:  # noqa: BLE001 - one line; the turn goes on without it
                why = f"{op} failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                say(why)
                out({"id": rid, "error": why})
    finally:
        keeper.close()
