"""The inbox's records: one request for a person, and the decision taken on it once."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

# A person's verdicts, and the two ways a request ends with nobody deciding it:
# its waiter gave up or its expiry passed ("expire"), or the call it was about
# went away (the client disconnected, the call ran or the session stopped: "withdraw").
Verdict = Literal["approve", "reject", "respond", "edit", "expire", "withdraw"]
Kind = Literal["approval", "question", "blocker"]
Risk = Literal["low", "medium", "high"]
Status = Literal["pending", "approved", "rejected", "answered", "expired", "withdrawn"]

VERDICTS = ("approve", "reject", "respond", "edit")  # what a person may give
ENDINGS = ("expire", "withdraw")  # what the system records when nobody waits any more
KINDS = ("approval", "question", "blocker")
RISKS = ("low", "medium", "high")
STATUSES = ("pending", "approved", "rejected", "answered", "expired", "withdrawn")
STATUS_OF = {"approve": "approved", "reject": "rejected", "respond": "answered", "edit": "approved",
             "expire": "expired", "withdraw": "withdrawn"}
PAST = {"approve": "approved", "reject": "rejected", "respond": "answered", "edit": "edited and approved",
        "expire": "expired", "withdraw": "withdrawn"}


def now() -> datetime:
    return datetime.now(timezone.utc)


def when(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class InboxDecision(BaseModel):
    verdict: Verdict
    note: str = ""  # approve note, reject reason, the response text, or why the request ended
    decided_by: str = ""  # "supervisor <key> (user@host:pid)" when signed, else user@host:pid
    decided_at: datetime = Field(default_factory=now)
    # The supervisor's signature (core/inbox/signing.py): the signed text as it was
    # signed, the signature and the public key, all base64. Empty: unverified.
    signed: str = ""
    signature: str = ""
    key: str = ""

    @property
    def ended(self) -> bool:
        """Nobody decided: the request expired or was withdrawn."""
        return self.verdict in ENDINGS

    @property
    def is_signed(self) -> bool:
        return bool(self.signature)

    def describe(self, request_id: str) -> str:
        """What the loser of a race is told: ``request X was already approved at
        ... by who (note)``, or for a request nobody waits for any more ``nobody is
        waiting for X: it expired at ...``."""
        if self.ended:
            why = f" ({self.note})" if self.note else ""
            return f"nobody is waiting for {request_id}: it {PAST[self.verdict]} at {when(self.decided_at)}{why}"
        by = f" by {self.decided_by}" if self.decided_by else ""
        note = f" ({self.note})" if self.note else ""
        return f"request {request_id} was already {PAST[self.verdict]} at {when(self.decided_at)}{by}{note}"


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
    # What a signed decision is bound to: ``binds`` names what runs (a tool's name, "mcp", "loop")
    # and the signature covers signing.input_hash(binds, detail) of the detail a person was shown.
    binds: str = ""
    expires_at: datetime | None = None  # nobody waits after this (None: until decided)
    # signing.input_hash(binds, detail) of the detail as given, before its secrets were
    # redacted for storage (core/govern/redact.py); empty in requests from before redaction
    input_hash: str = ""

    def expired(self, at: datetime | None = None) -> bool:
        return self.expires_at is not None and (at or now()) >= self.expires_at

    def exact_hash(self) -> str:
        """The hash a decision on this request signs: of exactly what it shows will run."""
        if self.input_hash:
            return self.input_hash
        from core.inbox.signing import input_hash

        return input_hash(self.binds or self.source.split(":", 1)[0], self.detail)

    def shown_hash(self) -> str:
        """The hash of what the request shows a person (its detail, secrets redacted):
        signed beside ``exact_hash`` so the shown text and what runs cannot part."""
        from core.inbox.signing import input_hash

        return input_hash(self.binds or self.source.split(":", 1)[0], self.detail)

    def allowed(self) -> tuple[str, ...]:
        """The verdicts a person may give on it."""
        if self.source == "loop":
            return tuple(self.meta.get("allowed") or ("approve", "reject"))
        return ("approve", "reject") if self.kind == "approval" else ("respond", "reject")
