"""``ARS.context``: what one turn of an agent gets from memory, within a deadline.

The user's message (and the turn before it) is the query (core/context/query.py); recall
answers (core/memory/recall.py); the memories given earlier in the session and the
session's own episodes (the agent has those in its window) are left out; the relevance
floor drops what is not about the message (core/context/floor.py); memories of the days
the message names ("yesterday") come first; one bounded block is rendered
(core/context/block.py); the receipt goes to the ledger (core/context/receipts.py).

A turn never waits on ARS longer than the deadline (``ARS_CONTEXT_DEADLINE``, 0.3 s): the
work runs on a worker thread and a late answer is dropped: nothing injected, a one-line
note saying so. Nothing here raises into the caller.
"""

from __future__ import annotations

import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable, Sequence

from core.context import block, floor as floors, query as queries, receipts, seen
from core.context.models import InjectedMemory, Receipt, TurnContext
from core.infra.pools import DaemonPool
from core.memory.tiers.base import one_line
from core.models import Hit, RecallResult

CANDIDATES = 20  # hits asked of recall (a 2,000-character block holds about 20 short memories, MADial's)
RECORD_TIMEOUT = 1.0  # seconds the receipt may wait for the ledger (a held lock: the turn goes on)
MAX_BUDGET = 100_000
AGENT_SOURCES = ("openclaw", "claude-code", "hermes", "loop")
WINDOW_EPISODES = 4  # episodes of the days a message names that join the block unmatched (newest first)


@dataclass
class Selection:
    """What a turn may get, best first, and why the rest went."""

    kept: list[Hit] = field(default_factory=list)
    signals: dict[str, floors.Signals] = field(default_factory=dict)
    cleared_by: str | None = None  # the memory that cleared the floor
    below_floor: int = 0
    already_given: int = 0
    own_session: int = 0
    best: floors.Signals | None = None
    other_person: int = 0  # memories that would clear the floor but are not about the person named
    named: tuple[str, ...] = ()


def select(result: RecallResult, *, given: set[str], session: str | None, floor: floors.Floor,
           weights: floors.Weights, episodes: dict, named: set[str], terms: dict[str, str] | None = None,
           neighbours: "Callable[[list[str]], dict[str, list[str]]] | None" = None) -> Selection:
    """The hits a turn may get: not given before in the session, not of the session itself
    (the agent has those), and only when one of them clears the floor (then each that
    holds something of the message, in recall's order: the budget decides how many).

    A memory that holds nothing of the message itself, matched through its session's
    neighbours ("Yesterday, it was great" after "How was the race?"), goes in only beside
    a neighbour that does: ``neighbours(ids)`` gives each id the episodes around it in its
    session (the window of its context field). Alone it tells an agent nothing; next to the
    memory that made it match, it is that exchange's answer."""
    out = Selection(named=tuple(sorted(named)))
    left: list[Hit] = []
    for h in result.hits:
        ep = episodes.get(h.episode_id)
        if h.episode_id in given:
            out.already_given += 1
        elif session and ep is not None and ep.session_id == session:
            out.own_session += 1
        else:
            left.append(h)
    for h in left:
        sig = floors.signals(h, weights, floors.is_about(episodes.get(h.episode_id), named),
                             (terms or {}).get(h.episode_id))
        out.signals[h.episode_id] = sig
        if out.best is None or (sig.about, sig.share, sig.cos or 0.0) > (out.best.about, out.best.share,
                                                                           out.best.cos or 0.0):
            out.best = sig
        if out.cleared_by is None and floor.passes(sig):
            out.cleared_by = h.episode_id
        elif not sig.about and floor.passes(floors.Signals(sig.share, sig.cos)):
            out.other_person += 1
    if out.cleared_by is None:
        out.below_floor = len(left)
    else:
        kept = {h.episode_id for h in left if floor.keeps(out.signals[h.episode_id])}
        kept |= _beside(kept, [h.episode_id for h in left if h.episode_id not in kept], neighbours)
        out.kept = [h for h in left if h.episode_id in kept]
        out.below_floor = len(left) - len(out.kept)
    return out


def _beside(kept: set[str], others: list[str], neighbours) -> set[str]:
    """Those of ``others`` whose session neighbours include a kept memory."""
    if not kept or not others or neighbours is None:
        return set()
    try:
        around = neighbours(others)
    except Exception:  # noqa: BLE001 - SQLite down: the memories that hold the message stand alone
        return set()
    return {i for i in others if any(n in kept for n in around.get(i, ()))}


def in_window(ts: datetime | None, window: tuple[date, date] | None) -> bool:
    if ts is None or window is None:
        return False
    day = (ts if ts.tzinfo else ts.astimezone()).astimezone().date()
    return window[0] <= day <= window[1]


def why_nothing(sel: Selection, result: RecallResult) -> str:
    """One line: why a turn got nothing."""
    failed = [f"{t.tier} {t.status}: {t.error}" for t in result.tiers if t.status in ("down", "timeout", "error")]
    if not result.hits:
        return "nothing injected: no memory matched" + (f" (recall degraded: {'; '.join(failed)[:200]})" if failed else "")
    parts = []
    if sel.below_floor:
        best = sel.best
        cos = f", cosine {best.cos:.2f}" if best and best.cos is not None else ""
        parts.append(f"{sel.below_floor} below the relevance floor (best: {best.share:.0%} of the query's "
                     f"weighted terms{cos})" if best else f"{sel.below_floor} below the relevance floor")
    if sel.other_person:
        parts.append(f"{sel.other_person} about others than the person the message names "
                     f"({', '.join(sel.named)[:80]})")
    if sel.already_given:
        parts.append(f"{sel.already_given} already given in this session")
    if sel.own_session:
        parts.append(f"{sel.own_session} from this session itself")
    return "nothing injected: " + ", ".join(parts)


class TurnContexts:
    """The per-turn context of one state directory (one per ARS, made on first use)."""

    def __init__(self, memory, settings):
        self.memory = memory
        self.settings = settings
        self.state_dir = Path(settings.state_dir)
        self.floor = floors.DEFAULT
        self._pool = DaemonPool(2, "ars-context")

    # -- the turn ------------------------------------------------------------------------------
    def context(self, prompt: object, *, session: str | None = None, agent: str | None = None,
                previous: object = None, budget: int | None = None, turn: str | None = None,
                record: bool = True, deadline: float | None = None,
                now: datetime | None = None) -> TurnContext:
        t0 = time.perf_counter()
        session = _label(session)
        agent, turn = _label(agent), _label(turn)
        limit = self._budget(budget)
        q = queries.build(prompt, previous, now)
        if not q.prompt or not any(ch.isalnum() for ch in q.text):
            out = TurnContext(note="nothing to recall: the message has no words to search for")
        elif limit < block.MIN_ENTRY + len(block.OPEN) + len(block.CLOSE):
            out = TurnContext(note=f"budget {limit} characters is too small for one memory: nothing injected")
        else:
            wait = self.settings.context_deadline if deadline is None else deadline
            try:
                fut = self._pool.submit(self._compute, q, session, limit, now)
                out = fut.result(timeout=max(0.0, wait))
            except FutureTimeout:
                out = TurnContext(note=f"no answer within {wait * 1000:.0f} ms: nothing injected")
            except Exception as exc:  # noqa: BLE001 - a turn never fails on ARS
                out = TurnContext(note=f"nothing injected: {one_line(exc)}")
        out.latency_ms = round((time.perf_counter() - t0) * 1000, 2)
        if record:
            problem = self._record(out, q, session, agent, turn, limit)
            if problem:
                out.note = f"{out.note}; {problem}" if out.note else problem
        return out

    def _budget(self, budget: object) -> int:
        if budget is None:
            return int(self.settings.context_budget)
        try:
            return max(0, min(MAX_BUDGET, int(budget)))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            return int(self.settings.context_budget)

    def recall(self, q: queries.TurnQuery, now: datetime | None = None) -> RecallResult:
        # the times the prompt names, not the reply quoted after it (core/memory/query.py)
        return self.memory.recall(q.text, k=CANDIDATES, now=now, asks=q.prompt)

    def _compute(self, q: queries.TurnQuery, session: str | None, limit: int,
                 now: datetime | None) -> TurnContext:
        result = self.recall(q, now)
        return self.assemble(q, result, session, limit, now)

    def assemble(self, q: queries.TurnQuery, result: RecallResult, session: str | None, limit: int,
                 now: datetime | None = None, floor: floors.Floor | None = None,
                 episodes: dict | None = None) -> TurnContext:
        """The block for a recall already run (the benchmark re-assembles one recall at
        several budgets and floors, with the hits' ``episodes`` read once)."""
        if episodes is None:
            episodes = self.episodes([h.episode_id for h in result.hits])
        given = seen.given(self.state_dir, session)
        sel = select(result, given=given, session=session,
                     floor=floor or self.floor, weights=self.weights(result.tokens), episodes=episodes,
                     named=floors.named_persons(q.text, episodes.values()), terms=self.terms(episodes),
                     neighbours=lambda ids: self.memory.sqlite.session_neighbours(ids))
        kept = list(sel.kept)
        if q.window is not None:  # the days the message names first, in recall's order within
            kept.sort(key=lambda h: not in_window(_ts(h, episodes), q.window))
            kept = self._with_window(kept, q.window, given, session, episodes)
        if not kept:
            return TurnContext(note=why_nothing(sel, result))
        mems = [_memory(h, episodes.get(h.episode_id)) for h in kept]
        tokens = _prompt_tokens(q.prompt) or result.tokens
        text, entries = block.render(mems, tokens, limit, now)
        if not entries:
            return TurnContext(note="nothing injected: no memory fits the budget")
        score = {h.episode_id: h.score for h in kept}
        return TurnContext(text=text, memories=[
            InjectedMemory(episode_id=e.memory.episode_id, score=score[e.memory.episode_id],
                           ts=e.memory.ts.isoformat() if e.memory.ts else None, chars=len(e.text),
                           agent=e.memory.agent, session=e.memory.session) for e in entries])

    def _with_window(self, kept: list[Hit], window: tuple[date, date], given: set[str], session: str | None,
                     episodes: dict) -> list[Hit]:
        """"继续，把昨天那个项目的结果给我看看" shares no word with yesterday's work, yet names it:
        the episodes of the days a message names join the block after the ones recall matched in
        that window (newest first, ``WINDOW_EPISODES`` at most), before the rest. Only when the
        message names the days itself: recency is a signal there, never a bonus elsewhere."""
        matched = [h for h in kept if in_window(_ts(h, episodes), window)]
        rest = [h for h in kept if h not in matched]
        have = {h.episode_id for h in kept}
        start = datetime.combine(window[0], datetime.min.time()).astimezone()
        end = datetime.combine(window[1], datetime.max.time()).astimezone()
        pad = timedelta(hours=14)  # stored times keep their own zone: compare as text with room, then exactly
        try:
            ids = self.memory.sqlite.ids_between((start - pad).isoformat(), (end + pad).isoformat(),
                                                 WINDOW_EPISODES * 4)
        except Exception:  # noqa: BLE001 - SQLite down: what recall matched stands
            return kept
        extra: list[Hit] = []
        for i in ids:
            if i in have or i in given:
                continue
            ep = episodes.get(i) if i in episodes else self.episodes([i]).get(i)
            episodes[i] = ep
            if ep is None or (session and ep.session_id == session) or not in_window(ep.ts, window):
                continue
            extra.append(Hit(episode_id=i, tier="time", rank=len(extra) + 1, score=0.0,
                             breakdown={"time_window": 0.0}, snippet=""))
        # an agent's work (and what the supervisor decided of it) before a note or an imported chat
        extra.sort(key=lambda h: episodes[h.episode_id].source not in AGENT_SOURCES + ("inbox",))
        return matched + extra[:WINDOW_EPISODES] + rest

    def weights(self, tokens: Sequence[str]) -> floors.Weights:
        """The query's terms weighted by the SQLite statistics recall just used (cached)."""
        from core.memory.text import query_terms

        terms = query_terms(tokens)
        try:
            n_docs, df = self.memory.sqlite.doc_freqs(terms)
        except Exception:  # noqa: BLE001 - without statistics every term counts the same
            return floors.Weights(terms)
        return floors.Weights(terms, n_docs, df)

    def terms(self, episodes: dict) -> dict[str, str]:
        """The stored index terms of the episodes SQLite holds ({} when it cannot say)."""
        ids = [i for i, ep in episodes.items() if ep is not None]
        try:
            return self.memory.sqlite.terms_of(ids) if ids else {}
        except Exception:  # noqa: BLE001 - the tiers' matched tokens stand in
            return {}

    def episodes(self, ids: Sequence[str]) -> dict:
        """episode id -> its Episode from SQLite (None when SQLite cannot say)."""
        out = {}
        for i in ids:
            try:
                out[i] = self.memory.sqlite.get(i)
            except Exception:  # noqa: BLE001 - SQLite down: the hit's own snippet stands in
                out[i] = None
        return out

    # -- the receipt -------------------------------------------------------------------------------
    def _record(self, out: TurnContext, q: queries.TurnQuery, session: str | None, agent: str | None,
                turn: str | None, limit: int) -> str:
        """Write the receipt and the session's given set; '' or one line saying what failed."""
        receipt = Receipt(session=session, turn=turn, agent=agent, query=q.text, memories=out.memories,
                          chars=len(out.text), latency_ms=out.latency_ms, budget=limit, note=out.note)

        def write() -> None:
            self.memory.ledger.append([receipts.event_of(receipt)])
            seen.add(self.state_dir, session, [m.episode_id for m in out.memories])

        try:
            self._pool.submit(write).result(timeout=RECORD_TIMEOUT)
        except FutureTimeout:
            return f"receipt not written within {RECORD_TIMEOUT:.0f} s (the ledger is busy)"
        except Exception as exc:  # noqa: BLE001 - the block stands; the receipt is what failed
            return f"receipt not written: {one_line(exc)}"
        return ""

    def prepare(self) -> None:
        """Pay the tiers' one-time set-up now (a fresh process, before its first turn)."""
        self.memory.prepare()


def _label(value: object) -> str | None:
    if value is None:
        return None
    text = queries.clean(str(value), head=200, tail=0)
    return text or None


def _ts(h: Hit, episodes: dict) -> datetime | None:
    ep = episodes.get(h.episode_id)
    return (ep.ts if ep is not None else None) or h.ts


def _memory(h: Hit, ep) -> block.Memory:
    if ep is None:
        origin = h.origin or {}
        return block.Memory(h.episode_id, h.score, h.ts, origin.get("agent", ""), "", h.snippet)
    # an agent's own source names it; a generic file's ("jsonl", "manual") says nothing about who
    agent = ep.agent or (ep.source if ep.source in AGENT_SOURCES else "")
    return block.Memory(h.episode_id, h.score, ep.ts or h.ts, agent, ep.session_id, ep.text)


def _prompt_tokens(prompt: str) -> list[str]:
    from core.memory.text import tokenize

    return tokenize(prompt, query=True)[:200]
