"""What one turn gets from memory (``TurnContext``) and what was recorded of it (``Receipt``).

Exported from core.api: the agents' adapters, the daemon and the CLI read these shapes.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class InjectedMemory(BaseModel):
    """One memory inside a turn's block."""

    episode_id: str
    score: float  # the fused recall score (relative to the query's other hits)
    ts: str | None = None  # ISO time of the episode (the block shows it in local time)
    chars: int = 0  # characters of the block this memory takes (its header and quoted lines)
    agent: str = ""
    session: str = ""


class TurnContext(BaseModel):
    """The block a turn gets: ``text`` is injected byte for byte ("" when nothing cleared
    the relevance floor, or ARS could not answer in time: ``note`` says which)."""

    text: str = ""
    memories: list[InjectedMemory] = Field(default_factory=list)
    latency_ms: float = 0.0
    note: str = ""  # one line: why nothing was injected, or what failed


class Receipt(BaseModel):
    """A turn's injection as the ledger recorded it (event ``context.injected``)."""

    event_id: str = ""
    at: str = ""  # when it was recorded (ISO, UTC)
    session: str | None = None
    turn: str | None = None
    agent: str | None = None
    query: str = ""  # the query recall ran (the prompt and the turn before, cut; secrets redacted)
    memories: list[InjectedMemory] = Field(default_factory=list)
    chars: int = 0
    latency_ms: float = 0.0
    budget: int = 0
    note: str = ""
