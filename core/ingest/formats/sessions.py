"""A session's messages -> episodes, and which source lines each came from.

``Msg`` and ``SessionBuilder``: a session's messages become one or more
episodes, split after ``GAP_SECONDS`` of silence or ``MAX_EPISODE_CHARS`` of
text, ids ``<source>:<session_id>:<part>``, ``meta["prev"]`` chaining the parts
(FOLLOWED_BY in the graph), each part enriched by the deterministic extractor.
Closed parts wait in a ``Spool`` on disk until the session ends.
``SessionTable`` keeps the open sessions of a file that interleaves many.
``SpanCollector``: which source lines belong to which episode, as merged
``(first_line, last_line, episode_id)`` ranges for the raw-file tier.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from core.enrich.extract import enrich_deterministic
from core.enrich.hints import Hints
from core.ingest.formats.parsed import Parsed, Spool, describe, storable
from core.models import Episode

# A session's messages become a new episode after this much silence or text.
GAP_SECONDS = 30 * 60
MAX_EPISODE_CHARS = 6000
# One message's text is cut to this much in an episode (the raw file keeps it all).
MAX_MESSAGE_CHARS = 12_000


@dataclass
class Msg:
    """One message of a session, ready to go into an episode."""

    line: int
    role: str
    text: str  # rendered for the episode, role prefix included
    ts: datetime | None = None
    hints: Hints = field(default_factory=Hints)
    lines: tuple[int, ...] = ()  # further source lines that contributed (besides ``line``)


class SpanCollector:
    """Source lines per episode, merged into ranges.

    Consecutive lines of one episode merge into one span even across lines
    that belong to no episode (noise, metadata), but never across a line of
    another episode, so spans of interleaved sessions stay exact. A mark is
    two machine integers (a file of a million lines costs megabytes, not a
    tuple a line), sorted at the end only when they came out of order.
    """

    def __init__(self) -> None:
        self._lines = array("q")
        self._owners = array("q")  # index into _ids
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._in_order = True

    def add(self, line: int, episode_id: str) -> None:
        owner = self._index.get(episode_id)
        if owner is None:
            owner = self._index[episode_id] = len(self._ids)
            self._ids.append(episode_id)
        if self._lines and line < self._lines[-1]:
            self._in_order = False
        self._lines.append(line)
        self._owners.append(owner)

    def add_range(self, first: int, last: int, episode_id: str) -> None:
        self.add(first, episode_id)
        if last != first:
            self.add(last, episode_id)

    def _ordered(self) -> Iterator[tuple[int, int]]:
        """(line, owner) by line; marks of one line keep the order they were added in."""
        lines, owners = self._lines, self._owners
        if self._in_order:
            yield from zip(lines, owners)
            return
        for i in sorted(range(len(lines)), key=lines.__getitem__):  # stable
            yield lines[i], owners[i]

    def spans(self) -> list[tuple[int, int, str]]:
        out: list[tuple[int, int, str]] = []
        first = last = owner = -1  # the run being extended
        for line, who in self._ordered():
            if who == owner:
                last = line
                continue
            if owner >= 0:
                out.append((first, last, self._ids[owner]))
            first, last, owner = line, line, who
        if owner >= 0:
            out.append((first, last, self._ids[owner]))
        return list(dict.fromkeys(out))


@dataclass
class _Part:
    index: int
    msgs: list[Msg] = field(default_factory=list)
    size: int = 0
    first: datetime | None = None
    last: datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)


# Complete parts a session holds in memory before they are parked in the spool.
KEEP_PARTS = 16


class SessionBuilder:
    """Messages of one session -> episodes (split on gaps and size).

    A session's episodes are built in ``finish``, since its title and
    channel, which every episode carries, may be named on its very last
    line. Until then at most KEEP_PARTS complete parts (and the open one)
    are held in memory; older ones wait in the ``spool`` (when given), so a
    long session costs disk, not memory."""

    def __init__(self, path: Path, source: str, session_id: str, *, agent: str = "", channel: str = "",
                 meta: dict[str, Any] | None = None, hints: Hints | None = None,
                 gap_seconds: float = GAP_SECONDS, max_chars: int = MAX_EPISODE_CHARS,
                 spool: Spool | None = None):
        self.path = path
        self.source = source
        self.session_id = session_id
        self.agent = agent
        self.channel = channel
        self.meta = dict(meta or {})
        self.hints = hints or Hints()  # session-wide: cwd, project, title
        self.gap_seconds = gap_seconds
        self.max_chars = max_chars
        self.spool = spool
        self._done: list[_Part | int] = []  # complete parts, or their place in the spool
        self._held = 0  # complete parts in memory
        self._open: _Part | None = None
        self._parts = 0
        self._messages = 0
        self._first_channel = ""  # the first platform a message named
        self._cut = False
        self._pending_meta: dict[str, Any] = {}
        # the id of the part before the first one ``finish`` yields: set when a builder carries
        # on from a checkpoint (core/capture), whose earlier parts are stored already
        self.prev: str | None = None
        self.open_prev: str | None = None  # after ``finish``: the ``prev`` the open part was given

    def __getstate__(self) -> dict[str, Any]:
        # parked in the spool itself (``SessionTable``): the spool's file does not pickle
        return {**self.__dict__, "spool": None}

    @property
    def message_count(self) -> int:
        return self._messages

    def cut(self) -> None:
        """The next message starts a new episode (a compaction, a new branch)."""
        self._cut = True

    def set_part_meta(self, key: str, value: Any) -> None:
        """Meta for the episode now open (or the next one)."""
        if self._open is not None and not self._cut:
            self._open.meta[key] = value
        else:
            self._pending_meta[key] = value

    def add(self, msg: Msg) -> None:
        if len(msg.text) > MAX_MESSAGE_CHARS:
            msg.text = msg.text[: MAX_MESSAGE_CHARS - 1] + "…"
        cur = self._open
        new = cur is None or self._cut
        if cur is not None and not new:
            if cur.last and msg.ts and (msg.ts - cur.last).total_seconds() > self.gap_seconds:
                new = True
            elif cur.size + len(msg.text) > self.max_chars and cur.msgs:
                new = True
        if new or cur is None:
            self._close_part()
            cur = self._open = _Part(self._parts, meta=self._pending_meta)
            self._parts += 1
            self._pending_meta = {}
            self._cut = False
        cur.msgs.append(msg)
        cur.size += len(msg.text) + 1
        self._messages += 1
        if not self._first_channel and msg.hints.channels:
            self._first_channel = msg.hints.channels[0]
        if msg.ts:
            cur.first = cur.first or msg.ts
            cur.last = msg.ts if cur.last is None or msg.ts > cur.last else cur.last

    def _close_part(self) -> None:
        if self._open is None:
            return
        self._done.append(self._open)
        self._open = None
        self._held += 1
        if self._held > KEEP_PARTS:
            self.spill()  # a short session never touches disk

    def spill(self) -> None:
        """Park the complete parts held in memory (in order) in the spool."""
        if self.spool is not None and self._held:
            self._done = [self.spool.put(p) if isinstance(p, _Part) else p for p in self._done]
            self._held = 0

    def _all_parts(self) -> Iterator[_Part]:
        for part in self._done:
            yield self.spool.get(part) if isinstance(part, int) and self.spool is not None else part  # type: ignore[misc]
        if self._open is not None:
            yield self._open

    def finish(self, parsed: Parsed, spans: SpanCollector, title: str = "") -> Iterator[Episode]:
        """Close the session: its episodes, enriched, one at a time. An episode
        that cannot be built is reported at its first line; the others go on."""
        prev = self.prev
        # A platform named once (an envelope, a session column) holds for the whole session.
        channel = self.channel or self._first_channel
        for part in self._all_parts():
            if not part.msgs:
                continue
            try:
                ep = self._episode(part, channel, title, prev)
            except Exception as exc:  # noqa: BLE001 - one episode's failure is its lines' error
                parsed.bad(self.path, part.msgs[0].line, f"cannot build the episode of lines "
                                                         f"{part.msgs[0].line}-{part.msgs[-1].line}: {describe(exc)}")
                continue
            for m in part.msgs:
                spans.add(m.line, ep.id)
                for ln in m.lines:
                    spans.add(ln, ep.id)
            if part is self._open:
                self.open_prev = prev
            prev = ep.id
            yield ep

    def _episode(self, part: _Part, channel: str, title: str, prev: str | None) -> Episode:
        eid = f"{self.source}:{self.session_id}:{part.index}"
        meta: dict[str, Any] = {**self.meta, **part.meta, "path": storable(str(self.path))}
        if title:
            meta["title"] = title
        if prev:
            meta["prev"] = prev
        hints = Hints(title=title, cwd=self.hints.cwd, projects=list(self.hints.projects),
                      agents=list(self.hints.agents), channels=list(self.hints.channels),
                      people=list(self.hints.people))
        for m in part.msgs:
            hints.merge(m.hints)
        hints.people = list(dict.fromkeys(hints.people))
        hints.channels = list(dict.fromkeys(hints.channels))
        ep = Episode(
            id=eid, source=self.source, session_id=self.session_id, agent=self.agent,  # type: ignore[arg-type]
            channel=channel,
            text="\n".join(m.text for m in part.msgs), first_ts=part.first, last_ts=part.last,
            message_count=len(part.msgs), meta=meta,
        )
        return enrich_deterministic(ep, hints)


class SessionTable:
    """The open sessions of one file by id, in the order first seen.

    A file can interleave any number of sessions (generic JSONL: one
    ``session_id`` a line), each of which must stay open to the end of the
    file. The most recently used ``live`` builders stay in memory; the others
    are parked in the spool and read back when their session speaks again,
    so memory is bounded by ``live`` open episodes, not by the session count."""

    def __init__(self, spool: Spool, live: int = 256):
        self.spool = spool
        self.live = live
        self._all: dict[str, SessionBuilder | int] = {}  # first-seen order; parked: spool offset
        self._recent: OrderedDict[str, SessionBuilder] = OrderedDict()

    def get(self, key: str) -> SessionBuilder | None:
        entry = self._all.get(key)
        if entry is None:
            return None
        if isinstance(entry, int):
            entry = self._unpark(key, entry)
        self._recent.move_to_end(key)
        return entry

    def add(self, key: str, builder: SessionBuilder) -> SessionBuilder:
        self._all[key] = builder
        self._recent[key] = builder
        self._park_idle()
        return builder

    def _unpark(self, key: str, at: int) -> SessionBuilder:
        builder: SessionBuilder = self.spool.get(at)
        builder.spool = self.spool
        self._all[key] = builder
        self._recent[key] = builder
        self._park_idle()
        return builder

    def _park_idle(self) -> None:
        while len(self._recent) > self.live:
            key, builder = self._recent.popitem(last=False)
            builder.spill()  # its complete parts are written once, not with every parking
            self._all[key] = self.spool.put(builder)

    def builders(self) -> Iterator[SessionBuilder]:
        """Every session in first-seen order (parked ones read back one at a time)."""
        for key in list(self._all):
            entry = self._all.pop(key)
            self._recent.pop(key, None)
            if isinstance(entry, int):
                entry = self.spool.get(entry)
                entry.spool = self.spool
            yield entry
