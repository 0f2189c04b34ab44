"""The facade's capture methods (``ARS`` inherits them; core/api.py stays the one facade).

A turn, a transcript's new lines, a gated call's decision and its outcome become
memory here, durable and recallable when the method returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class CaptureMethods:
    memory: Any
    state_dir: Path
    inbox: Any
    supervisor_pin: str | None

    def capture_turn(self, agent: str, session: str, turn: dict, wait: float = 5.0) -> list[str]:
        """Store one turn an agent hands over (``{"user", "assistant", "tools": [{"name", "input",
        "exit", "output"}], "ts", "turn"}``); the episode ids it went into: ``<source>:<session>:<part>``,
        the ids the catch-up ingest of the agent's store gives the same session. ``CaptureBusy``
        when the state directory stayed busy for ``wait`` s (the next capture stores it).
        ``{"transcript": PATH[, "first_read_max": BYTES]}``: the turn is what the agent's transcript
        added since the last capture (``capture_transcript``; how a hook hands a turn to the
        recall daemon without loading ARS itself)."""
        if isinstance(turn, dict) and "transcript" in turn:
            limit = turn.get("first_read_max")
            return self.capture_transcript(turn["transcript"], agent, wait=wait,
                                           first_read_max=limit if isinstance(limit, int) else None)
        from core.capture.turns import capture_turn
        return capture_turn(self.memory, agent, session, turn, wait=wait)

    def capture_transcript(self, path: str | Path, fmt: str = "claude-code", wait: float = 5.0,
                           first_read_max: int | None = None) -> list[str]:
        """Store what an agent's transcript added since the last capture, as ``ars ingest`` of the
        whole file would store it (same ids, same text); the ids of the episodes new or changed.
        ``CaptureDeferred`` (a ``CaptureBusy``): never captured and over ``first_read_max`` bytes."""
        from core.capture.transcript import capture_transcript
        return capture_transcript(self.memory, path, fmt, wait=wait, first_read_max=first_read_max)

    def inbox_remember(self, request_id: str, *, session: str | None = None, call_id: str | None = None,
                       pin: str | None = None, wait: float = 2.0) -> str | None:
        """The memory of a decided agent request (``inbox:<id>``: the call, who decided what and
        when, the signature checked against ``pin`` or this state's key); with ``session`` and
        ``call_id`` the call is linked to it, so ``inbox_outcome((session, call_id), ...)`` finds
        it. None: no such request."""
        from core.inbox.call_episode import remember
        return remember(self.memory, self.inbox, request_id, session=session, call_id=call_id,
                        pin=pin or self.supervisor_pin, wait=wait)

    def inbox_outcome(self, request: "str | tuple[str, str]", status: "int | str | None", output_head: str = "",
                      *, by: str = "", wait: float = 2.0) -> str | None:
        """What ran after a decision: ``status`` an exit code (0: finished) or ``ok`` / ``error`` /
        ``not run``, ``output_head`` its first lines; rewrites the call's memory (same id) and
        returns its id. ``request``: the request id, or ``(session, call_id)`` of a call
        ``inbox_remember`` linked. None: no request matches."""
        from core.inbox.call_episode import record_outcome
        return record_outcome(self.memory, self.inbox, request, status, output_head, by=by,
                              pin=self.supervisor_pin, wait=wait)
