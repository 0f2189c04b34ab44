"""Why a memory the supervisor expected was not in a turn's block.

Per receipt of the session (core/context/receipts.py): it was injected; or it was given at
an earlier turn (never twice in a session); or recall, asked again with the turn's query,
does not return it (``explain`` says why: not stored, no shared word, ranked below the
cut); or it is returned but below the relevance floor (its signals against the floor's);
or it clears the floor now (the turn ran out of time or budget, or memory changed since).
"""

from __future__ import annotations

from pydantic import BaseModel

from core.context import floor as floors
from core.context.models import Receipt


class WhyNot(BaseModel):
    turn: str | None = None
    at: str = ""
    injected: bool = False
    reason: str  # one line for a person
    explain: str = ""  # explain's verdict, when recall did not return it


def why_not(memory, receipts: list[Receipt], episode_id: str, k: int, floor: floors.Floor, weigh,
            limit: int = 10) -> list[WhyNot]:
    """One answer per receipt (the last ``limit`` of them), oldest first."""
    given_at: dict[str, str] = {}
    out: list[WhyNot] = []
    shown = receipts[-limit:] if limit else receipts
    first_shown = len(receipts) - len(shown)
    for i, r in enumerate(receipts):
        ids = {m.episode_id for m in r.memories}
        label = r.turn or f"#{i + 1}"  # a turn without an id: its place in the session
        if i >= first_shown:
            out.append(_one(memory, r, label, episode_id, ids, given_at, k, floor, weigh))
        for eid in ids:
            given_at.setdefault(eid, label)
    return out


def _one(memory, r: Receipt, label: str, episode_id: str, ids: set[str], given_at: dict[str, str], k: int,
         floor: floors.Floor, weigh) -> WhyNot:
    base = dict(turn=label, at=r.at)
    if episode_id in ids:
        rank = [m.episode_id for m in r.memories].index(episode_id) + 1
        return WhyNot(injected=True, reason=f"injected, #{rank} of {len(r.memories)}", **base)
    if episode_id in given_at:
        return WhyNot(reason=f"already given at turn {given_at[episode_id]}: never twice in a session", **base)
    if not r.query.strip():
        return WhyNot(reason=f"the turn had no query to search ({r.note or 'empty message'})", **base)
    try:
        result = memory.recall(r.query, k=k)
    except Exception as exc:  # noqa: BLE001 - said as the reason
        return WhyNot(reason=f"recall cannot be asked again: {' '.join(str(exc).split())[:160]}", **base)
    hit = next((h for h in result.hits if h.episode_id == episode_id), None)
    if hit is None:
        try:
            verdict = memory.explain(r.query, episode_id, k=k).verdict
        except Exception as exc:  # noqa: BLE001
            verdict = f"explain failed: {' '.join(str(exc).split())[:160]}"
        return WhyNot(reason=f"recall does not return it in its top {k} for this turn's query", explain=verdict,
                      **base)
    try:
        terms = memory.sqlite.terms_of([episode_id]).get(episode_id)
    except Exception:  # noqa: BLE001 - the matched tokens stand in
        terms = None
    sig = floors.signals(hit, weigh(result.tokens), terms=terms)
    cos = f", cosine {sig.cos:.2f}" if sig.cos is not None else ", no cosine (not embedded, or dense off)"
    if not r.memories and "below the relevance floor" in r.note:
        return WhyNot(reason=(f"no memory cleared the relevance floor at this turn (this one holds {sig.share:.0%} "
                              f"of the query's weighted terms{cos}; the floor is {floor.share:.0%} or cosine "
                              f"{floor.cos:.2f})"), **base)
    when = f" ({r.note})" if r.note else ""
    return WhyNot(reason=f"recall ranks it #{hit.rank}: the memories ranked before it filled the budget of "
                         f"{r.budget} characters, or memory has changed since the turn{when}", **base)
