"""Goal files (DESIGN.md, goal-file format): a ``GoalFrame`` as JSON,
optionally with the ``script`` the offline policy follows. A malformed file
is a one-line ``BadQuery`` naming the file and the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import first_error
from ..recall import BadQuery
from .models import GoalFrame


def _first_error(exc: ValidationError) -> str:
    return first_error(exc, "(top level)", more=True)


def load_goal(goal: str | Path | dict[str, Any]) -> GoalFrame:
    """A goal file path (``Path``), a dict, or plain goal text (``str``)."""
    if isinstance(goal, dict):
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
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise BadQuery(f"goal file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadQuery(f"goal file {path} must hold one JSON object (a GoalFrame), not {type(data).__name__}")
    try:
        return GoalFrame.model_validate(data)
    except ValidationError as exc:
        raise BadQuery(f"goal file {path}: {_first_error(exc)}") from None
