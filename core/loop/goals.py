"""Goal files (DESIGN.md, goal-file format): a ``GoalFrame`` as JSON,
optionally with the ``script`` the offline policy follows. A malformed file
is a one-line ``BadQuery`` naming the file and the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import first_error
from core.errors import BadQuery
from core.loop.models import GoalFrame


MAX_DEPTH = 32  # nesting of objects and lists in a goal file or in edited arguments


def json_depth(value: Any) -> int:
    """How deeply objects and lists nest in ``value`` (iterative: any depth is safe)."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            d += 1
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                return d  # deep enough to refuse: stop walking
            todo.extend((x, d) for x in v)
    return deepest


def parse_json(text: str, what: str) -> Any:
    """``json.loads`` for input a person gave, with nesting bounded: a value
    nested deeper than ``MAX_DEPTH`` (even one that would exhaust the parser's
    recursion) is a one-line ``BadQuery`` saying so."""
    too_deep = f"{what} nests objects or lists more than {MAX_DEPTH} deep: flatten it"
    try:
        data = json.loads(text)
    except RecursionError:
        raise BadQuery(too_deep) from None
    except ValueError as exc:
        raise BadQuery(f"{what} is not JSON: {exc}") from None
    if json_depth(data) > MAX_DEPTH:
        raise BadQuery(too_deep)
    return data


def _first_error(exc: ValidationError) -> str:
    return first_error(exc, "(top level)", more=True)


def load_goal(goal: str | Path | dict[str, Any]) -> GoalFrame:
    """A goal file path (``Path``), a dict, or plain goal text (``str``)."""
    if isinstance(goal, dict):
        if json_depth(goal) > MAX_DEPTH:
            raise BadQuery(f"bad goal: it nests objects or lists more than {MAX_DEPTH} deep: flatten it")
        try:
            return GoalFrame.model_validate(goal)
        except ValidationError as exc:
            raise BadQuery(f"bad goal: {_first_error(exc)}") from None
    if isinstance(goal, str):
        if not goal.strip():
            raise BadQuery("empty goal: say what the loop should achieve, e.g. --goal \"draft the release notes\"")
        return GoalFrame(goal=goal)
    path = Path(goal)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadQuery(f"goal file {path}: no such file; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadQuery(f"goal file {path}: cannot read it ({exc})") from None
    data = parse_json(raw, f"goal file {path}")
    if not isinstance(data, dict):
        raise BadQuery(f"goal file {path} must hold one JSON object (a GoalFrame), not {type(data).__name__}")
    try:
        return GoalFrame.model_validate(data)
    except ValidationError as exc:
        raise BadQuery(f"goal file {path}: {_first_error(exc)}") from None
