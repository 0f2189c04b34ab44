"""ARS's errors and how each is said to a person: one line that names the problem, and
the exit code the command ends with (``exit_code``: 2 for an input the person must fix,
1 for a failure). tui/cli/error_map.py is the one place the front ends turn an error into
that line and code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class ArsError(Exception):
    """An error ARS says in one line; the command exits with ``exit_code``."""

    exit_code = 1


class BadQuery(ArsError, ValueError):
    """A query or option a person must fix (the CLI exits 2 on it)."""

    exit_code = 2


BadInput = BadQuery  # the facade's name for it (core/api.py)


class Failure(ArsError):
    """Something failed that the person did not get wrong (busy, damaged, unwritable): exit 1."""

    exit_code = 1


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


def failure_line(exc: BaseException) -> tuple[int, str]:
    """(exit code, one line) for a failure no command handled: what went wrong
    and what to do. Exit 2 when the person must fix an input, 1 otherwise."""
    import errno
    from core.infra.sqlite_lib import sqlite3

    if isinstance(exc, RecursionError):
        return 2, "input nested too deeply to read (thousands of brackets): simplify the JSON"
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        if exc.errno == errno.ENOSPC:
            return 1, (f"disk full writing{where}: free some space and run the command again "
                       "(everything acknowledged before is kept in the ledger)")
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return 1, (f"cannot write{where} ({exc.strerror}): make the state directory writable "
                       "or pass --state DIR / set ARS_STATE_DIR to one that is")
        if exc.errno in (errno.EISDIR, errno.ENOTDIR):
            return 2, f"{exc.strerror}:{where}: a state file is a directory or the other way round; move it aside"
        return 1, f"{exc.strerror or exc}{where}"
    if isinstance(exc, sqlite3.Error):
        text = str(exc)
        if "full" in text:
            return 1, (f"disk full writing memory.sqlite ({text}): free some space and run the command again "
                       "(the ledger keeps what was acknowledged; SQLite catches up on the next start)")
        if "readonly" in text or "read-only" in text:
            return 1, (f"memory.sqlite is read-only ({text}): make the state directory writable "
                       "or pass --state DIR")
        if "malformed" in text or "not a database" in text:
            return 1, f"memory.sqlite is damaged ({text}): run `ars rebuild` to recreate it from the ledger"
        return 1, f"SQLite: {text}"
    text = " ".join(str(exc).split())[:200] or exc.__class__.__name__
    return 1, f"{exc.__class__.__name__}: {text} (set ARS_DEBUG=1 to see where)"
