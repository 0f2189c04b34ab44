"""The inbox's records: one request for a person, and the decision taken on it once."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

Verdict = Literal["approve", "reject", "respond", "edit"]
Kind = Literal["approval", "question", "blocker"]
Risk = Literal["low", "medium", "high"]
Status = Literal["pending", "approved", "rejected", "answered"]

VERDICTS = ("approve", "reject", "respond", "edit")
KINDS = ("approval", "question", "blocker")
RISKS = ("low", "medium", "high")
STATUSES = ("pending", "approved", "rejected", "answered")
STATUS_OF = {"approve": "approved", "reject": "rejected", "respond": "answered", "edit": "approved"}
PAST = {"approve": "approved", "reject": "rejected", "respond": "answered", "edit": "edited and approved"}


def now() -> datetime:
    return datetime.now(timezone.utc)


class InboxDecision(BaseModel):
    verdict: Verdict
    note: str = ""  # approve note, reject reason, or the response text
    decided_by: str = ""  # user@host:pid
    decided_at: datetime = Field(default_factory=now)

    def describe(self, request_id: str) -> str:
        """``request X was already approved at ... by who (note)``: what the loser of a race is told."""
        when = self.decided_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        by = f" by {self.decided_by}" if self.decided_by else ""
        note = f" ({self.note})" if self.note else ""
        return f"request {request_id} was already {PAST[self.verdict]} at {when}{by}{note}"


class InboxRequest(BaseModel):
    id: str  # "req-<12 hex>" for agent requests; "loop:<loop_id>:<request_id>" for a loop's pending request
    source: str  # "loop" | "mcp:<client>" | "claude-code:<session_id>"
    kind: Kind
    summary: str  # one line a person reads first
    detail: str = ""  # exactly what will run (the command, the tool input)
    risk: Risk = "medium"
    created_at: datetime = Field(default_factory=now)
    status: Status = "pending"
    decision: InboxDecision | None = None
    meta: dict[str, Any] = Field(default_factory=dict)  # e.g. tool_name, cwd, loop_id, request_id

    def allowed(self) -> tuple[str, ...]:
        """The verdicts a person may give on it."""
        if self.source == "loop":
            return tuple(self.meta.get("allowed") or ("approve", "reject"))
        return ("approve", "reject") if self.kind == "approval" else ("respond", "reject")
