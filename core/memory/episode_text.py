"""One episode's whole text, a page at a time: what an agent reads after recall or
the per-turn context showed it a snippet (MCP ``get``, Hermes' ``ars_get``,
OpenClaw's ``memory_get``).

Bounded: a page holds at most ``MAX_PAGE_CHARS`` characters of the text, from
``offset``; ``next_offset`` says where the next page starts, so a long
transcript costs the agent only what it asks for. Times are the episode's own,
in the machine's local zone (the person's clock, as the per-turn block shows).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from core.errors import BadQuery

if TYPE_CHECKING:
    from core.memory.tiers.sqlite.store import SqliteStore

PAGE_CHARS = 6000
MAX_PAGE_CHARS = 20000


class EpisodeText(BaseModel):
    """One page of an episode's text, with what it is."""

    model_config = ConfigDict(defer_build=True)  # built on first use: `import core.api` stays light

    episode_id: str
    agent: str = Field("", description="the agent whose session it was")
    session_id: str = ""
    source: str = ""
    summary: str = ""
    first_ts: datetime | None = Field(None, description="when it started (local time)")
    last_ts: datetime | None = Field(None, description="when it ended (local time)")
    text: str = Field(description="the text from offset, at most limit characters")
    offset: int = Field(0, description="where this page starts in the whole text")
    chars: int = Field(description="the whole text's length in characters")
    next_offset: int | None = Field(None, description="where the next page starts; null when this is the end")


def read(store: "SqliteStore", episode_id: str, *, offset: int = 0, limit: int = PAGE_CHARS) -> EpisodeText:
    """The page of ``episode_id`` from ``offset``; BadQuery for an unknown id or a bad page."""
    episode_id = (episode_id or "").strip()
    if not episode_id:
        raise BadQuery("episode_id is empty: pass an id recall or the context block gave (episode_id)")
    if not 1 <= limit <= MAX_PAGE_CHARS:
        raise BadQuery(f"limit must be 1-{MAX_PAGE_CHARS} characters, got {limit}")
    if offset < 0:
        raise BadQuery(f"offset must be 0 or more, got {offset}")
    ep = store.get(episode_id)
    if ep is None:
        raise BadQuery(f"unknown episode {episode_id[:80]!r}: use an id recall returned (hits[].episode_id); "
                       "a forgotten episode is gone")
    text = ep.text or ""
    if offset > len(text):
        raise BadQuery(f"offset {offset} is past the end of {episode_id[:80]} ({len(text)} characters)")
    end = min(len(text), offset + limit)
    return EpisodeText(episode_id=ep.id, agent=ep.agent, session_id=ep.session_id, source=ep.source,
                       summary=ep.summary, first_ts=_local(ep.first_ts), last_ts=_local(ep.last_ts),
                       text=text[offset:end], offset=offset, chars=len(text),
                       next_offset=end if end < len(text) else None)


class EpisodePages:
    """The facade's ``get`` (``ARS`` inherits it; core/api.py stays the one facade)."""

    memory: Any

    def get(self, episode_id: str, *, offset: int = 0, limit: int | None = None) -> EpisodeText:
        """One episode's text, a bounded page from ``offset`` (``limit`` characters, PAGE_CHARS
        by default); BadQuery for an unknown id or a page past the end."""
        return read(self.memory.sqlite, episode_id, offset=offset, limit=PAGE_CHARS if limit is None else limit)


def _local(ts: datetime | None) -> datetime | None:
    return ts.astimezone() if ts is not None else None
