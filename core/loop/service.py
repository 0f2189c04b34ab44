"""What the facade does with loops beyond one engine call: a loop started from any goal,
several loops' states at once, a loop run on an engine of its own, one history entry, a
decision recorded, reasoning text checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from core.errors import BadQuery


def load_states(store, loop_ids: Iterable[str]) -> tuple[dict, set[str], list[str]]:
    """The latest state of each loop; the ids that no longer exist; one line per
    checkpoint that cannot be read."""
    from core.loop.checkpoints import CorruptCheckpoint, LoopNotFound

    states: dict = {}
    gone: set[str] = set()
    problems: list[str] = []
    for loop_id in loop_ids:
        try:
            states[loop_id] = store.load(loop_id).state
        except LoopNotFound:
            gone.add(loop_id)
        except CorruptCheckpoint as exc:
            problems.append(f"{exc.path.name}: {exc.error}")
        except OSError as exc:  # vanished between the listing and the read
            problems.append(f"{loop_id}: {' '.join(str(exc).split())[:160]}")
    return states, gone, problems


def new_engine(state_dir: Path, memory, settings, pin: str | None, like=None):
    """An engine acting only on decisions ``pin`` signed; ``like``: sharing that engine's
    tools and checkpoint store (one engine runs one loop at a time)."""
    from core.loop.engine import Engine

    if like is None:
        engine = Engine(state_dir, memory, settings)
    else:
        engine = Engine(state_dir, memory, settings, tools=like.tools, store=like.store)
    engine.supervisor_pin = pin
    return engine


def history_entry(entries: list, loop_id: str, index: int):
    """Entry ``index`` of a loop's history; BadQuery naming the range there is."""
    for e in entries:
        if e.index == index:
            return e
    have = f"{entries[0].index}..{entries[-1].index}" if entries else "none"
    raise BadQuery(f"loop {loop_id} has no history entry {index} (entries {have}; "
                   "retention may have dropped it)")


def record_decision(engine, state_dir: Path, loop_id: str, kind: str, note: str, args: dict[str, Any] | None,
                    request_id: str | None, signer: Any) -> None:
    """A person's decision, recorded exactly once per request (core/loop/decisions.py)."""
    from core.loop.decisions import decide

    decide(state_dir, loop_id, kind, note=note, args=args, request_id=request_id,
           tools=engine.tools, store=engine.store, signer=signer)


def start(engine, goal: Any, policy: str, run: bool):
    """A new loop for ``goal`` (a GoalFrame, a goal file path, a dict or plain goal text), run
    to its first exit when ``run``."""
    from core.loop.goals import load_goal
    from core.loop.models import GoalFrame

    state = engine.create(goal if isinstance(goal, GoalFrame) else load_goal(goal), policy)
    return engine.run(state.loop_id) if run else state


def check(text: str):
    """First-principles verdicts (SOUL.md) on reasoning text; BadQuery when there is none."""
    from core.loop.checker import check_text

    if not isinstance(text, str) or not text.strip():
        raise BadQuery("nothing to check: give the reasoning as an argument or on stdin (ars check -)")
    return check_text(text)
