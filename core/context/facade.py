"""The facade's methods for memory in the agent's turn (``ARS`` inherits them: core/api.py).

Kept here so core/api.py stays the short list of what front ends call; everything is
imported on first use, so ``import core.api`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.context.engine import TurnContexts
    from core.context.models import Receipt, TurnContext
    from core.context.why import WhyNot


class TurnContextFacade:
    """``ARS.context`` and its receipts (needs ``self.memory``, ``self.settings``, ``self.state_dir``)."""

    _turns: "TurnContexts | None" = None

    @property
    def turns(self) -> "TurnContexts":
        """The per-turn context engine of this state directory (core/context/engine.py)."""
        if self._turns is None:
            from core.context.engine import TurnContexts

            self._turns = TurnContexts(self.memory, self.settings)  # type: ignore[attr-defined]
        return self._turns

    def context(self, prompt: str, *, session: str | None = None, agent: str | None = None,
                previous: str | None = None, budget: int | None = None, turn: str | None = None,
                record: bool = True, deadline: float | None = None) -> "TurnContext":
        """What one turn of an agent gets from memory: one bounded, dated block of quoted
        memories about ``prompt`` (and ``previous``, the reply before it), none given earlier
        in ``session``; ``text`` "" when nothing clears the relevance floor or no answer came
        within ``deadline`` s (``ARS_CONTEXT_DEADLINE``). ``budget``: characters
        (``ARS_CONTEXT_BUDGET``). ``record``: write the receipt (ledger ``context.injected``)
        and remember what the session was given. Never raises: ``note`` says what went wrong."""
        try:
            return self.turns.context(prompt, session=session, agent=agent, previous=previous, budget=budget,
                                      turn=turn, record=record, deadline=deadline)
        except Exception as exc:  # noqa: BLE001 - an agent's turn never fails on ARS
            from core.context.models import TurnContext
            from core.memory.tiers.base import one_line

            return TurnContext(note=f"nothing injected: {one_line(exc)}")

    def context_prepare(self) -> None:
        """Pay recall's one-time set-up before the first turn's deadline starts (a fresh process)."""
        try:
            self.turns.prepare()
        except Exception:  # noqa: BLE001 - the turn's deadline then says what is slow
            pass

    def context_receipts(self, session: str | None = None, limit: int | None = None) -> "list[Receipt]":
        """What each turn of ``session`` was given (every session's with None; "": turns that
        named none), oldest first."""
        from core.context.receipts import read

        return read(self.state_dir, session, limit)  # type: ignore[attr-defined]

    def context_why_not(self, session: str, episode_id: str, limit: int = 10) -> "list[WhyNot]":
        """Per turn of ``session`` (its last ``limit``; 0: all): whether ``episode_id`` was
        injected, and if not, why (given before, not recalled: ``explain``'s verdict, below the floor)."""
        from core.context.engine import CANDIDATES
        from core.context.why import why_not

        return why_not(self.memory, self.context_receipts(session), episode_id, CANDIDATES,  # type: ignore[attr-defined]
                       self.turns.floor, self.turns.weights, limit)

    def context_sessions(self) -> list[dict[str, Any]]:
        """Sessions that got turn contexts: session, agent, turns, injected, last; newest first."""
        from core.context.receipts import sessions

        return sessions(self.state_dir)  # type: ignore[attr-defined]
