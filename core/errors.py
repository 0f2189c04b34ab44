"""Error messages for people: one line that names the problem."""

from __future__ import annotations

from pydantic import ValidationError


def first_error(exc: ValidationError, whole: str = "", more: bool = False) -> str:
    """pydantic's first error as ``where: message`` (its full report runs to
    many lines). ``whole`` names the location when the error is about the
    whole value; ``more`` adds how many other errors there are."""
    errors = exc.errors()
    if not errors:
        return " ".join(str(exc).split())
    e = errors[0]
    where = ".".join(str(p) for p in e.get("loc", ())) or whole
    text = str(e.get("msg", "invalid"))
    if where:
        text = f"{where}: {text}"
    if more and len(errors) > 1:
        text += f" (and {len(errors) - 1} more)"
    return text
