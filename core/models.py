"""The shapes every part of ARS agrees on (DESIGN.md, Core model).

Memory: ``Episode`` in, ``RecallResult`` out (with one ``TierReport`` per tier
and ``Hit``s whose ``breakdown`` adds up to their score).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Source = Literal["openclaw", "claude-code", "hermes", "loop", "jsonl", "manual", "inbox"]
EntityType = Literal[
    "person", "agent", "product", "project", "file", "tool", "technology",
    "channel", "concept", "endpoint", "command",
]
TierName = Literal["neo4j", "sqlite", "dense", "files"]
TIER_NAMES: tuple[TierName, ...] = ("neo4j", "sqlite", "dense", "files")
TierStatus = Literal["ok", "down", "timeout", "error", "skipped", "empty"]
# Why a tier was skipped, in a word or two (the CLI's tier line, the dashboard's tier bar):
# Neo4j standing by while SQLite answers, the raw files as a fallback only, a tier not set up
SkipReason = Literal["standby", "fallback only", "not configured", "off"]


class Model(BaseModel):
    """The base of ARS's models: each builds its validator on first use, not
    at import. Every CLI call and hook is a fresh process that uses a few of
    them (a recall: ``RecallResult``, ``TierReport``, ``Hit``); building all
    at import cost ~100 ms of each."""

    model_config = ConfigDict(defer_build=True)


class Entity(Model):
    name: str = Field(min_length=1)
    type: EntityType = "concept"


class Relation(Model):
    src: str
    rel: str
    dst: str


class Episode(Model):
    """One remembered stretch of work or conversation."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: str = Field(min_length=1)
    source: Source = "manual"
    session_id: str = ""
    agent: str = ""
    channel: str = ""
    summary: str = ""
    text: str
    topics: list[str] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    message_count: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)
    # Where it was written (core/team/): stamped by Memory.store; an episode
    # from before namespaces existed reads as namespace "default", host "".
    namespace: str = "default"
    host: str = ""

    @field_validator("first_ts", "last_ts")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        # Naive timestamps are taken as UTC so recency arithmetic never mixes kinds.
        if v is not None and v.tzinfo is None:
            return v.replace(tzinfo=timezone.utc)
        return v

    @property
    def ts(self) -> datetime | None:
        return self.last_ts or self.first_ts

    def search_text(self) -> str:
        """What the stores index: summary, topics, entity names, then the text."""
        parts = [self.summary, " ".join(self.topics), " ".join(e.name for e in self.entities), self.text]
        return "\n".join(p for p in parts if p)


class Hit(Model):
    episode_id: str
    tier: str  # a tier name, or "fused" for merged hits
    rank: int  # 1-based
    score: float
    breakdown: dict[str, float] = Field(default_factory=dict)
    matched_tokens: list[str] = Field(default_factory=list)
    snippet: str = ""  # the part that matched and how it ended (core/memory/snippet.py)
    ts: datetime | None = None  # when the episode happened (its last message, else its first)
    # Where the memory came from: namespace, host, agent (when the tier knows)
    origin: dict[str, str] = Field(default_factory=dict)
    # Merged hits keep what each contributing tier said, for the dashboard.
    per_tier: dict[str, "Hit"] = Field(default_factory=dict)
    # Near-copies folded into this hit (the same request seen twice, a summary and its
    # source: core/memory/scoring.collapse_copies), by episode id, best first.
    copies: list[str] = Field(default_factory=list)


class TierReport(Model):
    tier: str
    status: TierStatus
    latency_ms: float = 0.0
    error: str = ""
    skip_reason: SkipReason | None = None  # with status "skipped": why (``error`` says it in full)
    hits: list[Hit] = Field(default_factory=list)
    candidates: int = 0  # how many episodes the tier scored before cutting to k
    not_embedded: int | None = None  # dense: stored episodes with no vector yet (`ars sync run`)


class RecallResult(Model):
    query: str
    tokens: list[str]
    k: int
    tiers: list[TierReport]
    hits: list[Hit]
    degraded: bool
    latency_ms: float = 0.0
    times: list[str] = Field(default_factory=list)  # the times it names, as windows ("前天 = 2026-12-03")

    def tier(self, name: str) -> TierReport | None:
        return next((t for t in self.tiers if t.tier == name), None)


class TierExplanation(Model):
    """Why one tier did or did not return an episode."""

    tier: str
    status: TierStatus
    stored: bool | None  # None: the tier could not be asked
    matched_tokens: list[str] = Field(default_factory=list)
    missing_tokens: list[str] = Field(default_factory=list)
    raw_score: float | None = None
    rank: int | None = None
    # the tier's score components for this episode (``context``: what its
    # neighbouring episodes in the session contributed)
    breakdown: dict[str, float] = Field(default_factory=dict)
    k: int
    verdict: str  # one sentence for a person
    candidates: int | None = None  # how many episodes the tier ranked (the "of" in "rank 39 of 41")


class Explanation(Model):
    query: str
    episode_id: str
    tokens: list[str]
    tiers: list[TierExplanation]
    fused_rank: int | None  # its place in the fusion of every tier's top ``depth`` (None: in no tier's)
    verdict: str
    depth: int = 0  # how many hits each tier gives to fusion (scoring.FUSION_DEPTH, or k when larger)


# -- loops at a glance --------------------------------------------------------------
# (comments, not docstrings: a model's docstring is its JSON schema's description, and the
# MCP ``loops`` tool's output schema is what agents read)
class PendingPrompt(BaseModel):  # what a loop waits for a person to decide, in brief
    request_id: str
    kind: str
    prompt: str
    risk: str = ""


# One loop at a glance: the MCP ``loops`` tool answers with it, and ``ars rehydrate``'s
# ``LoopBrief`` (core/loop/rehydrate.py) extends it with the next step, the blockers and the
# memories (and the whole pending request).
class LoopSummary(BaseModel):
    loop_id: str
    goal_id: str
    goal: str
    status: str
    step: str
    iteration: int
    pending: PendingPrompt | None = Field(None, description="what the loop waits for a person to decide")
    updated_at: datetime | None = None

    @classmethod
    def of(cls, state: Any) -> "LoopSummary":
        """The summary of a ``LoopState``."""
        p = state.pending_approval
        return cls(loop_id=state.loop_id, goal_id=state.goal_id, goal=state.goal.goal, status=state.status,
                   step=state.current_step, iteration=state.iteration, updated_at=state.updated_at,
                   pending=PendingPrompt(request_id=p.request_id, kind=p.kind, prompt=p.prompt, risk=p.risk)
                   if p is not None else None)
