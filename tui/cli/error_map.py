"""How an error is said to a person: one line and the exit code.

The one map the front ends use (the typer CLI's commands, the fast recall path,
the recall daemon, the dashboard's launcher, ``ars mcp``). ``core.errors`` gives
each ARS error its exit code (``ArsError.exit_code``: 2 when the person must fix
an input, 1 for a failure); this adds what is said for a malformed configuration
and for the loop's and the inbox's failures. Nothing is imported until an error
is mapped: the fast paths import this module.
"""

from __future__ import annotations


def said(exc: BaseException) -> tuple[int, str] | None:
    """(exit code, line) of an ARS error; None when ``exc`` is not one (the caller lets it rise)."""
    from core.errors import ArsError

    if isinstance(exc, ArsError):
        return exc.exit_code, str(exc)
    return None


def opening(exc: BaseException) -> tuple[int, str] | None:
    """As ``said``, for an error reading the settings or opening the store: a
    pydantic ValidationError there is a malformed ARS_* variable (exit 2)."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        from core.api import config_error

        return 2, f"bad configuration: {config_error(exc)}"
    return said(exc)


def of_loop_call(exc: BaseException, *, second_decision_fails: bool = False) -> tuple[int, str] | None:
    """As ``said``, for a loop or inbox call: failures (busy, corrupt, a state file that
    cannot be read or written) exit 1. ``second_decision_fails``: a request already
    decided by someone else exits 1 (``ars inbox``; the loop commands keep exit 2)."""
    from core.api import AlreadyDecided, CorruptCheckpoint, CorruptDecision, CorruptRequest, LoopBusy

    if isinstance(exc, AlreadyDecided):
        return 1 if second_decision_fails else 2, str(exc)
    if isinstance(exc, (LoopBusy, CorruptCheckpoint, CorruptRequest)):
        return 1, str(exc)
    if isinstance(exc, CorruptDecision):
        return 1, f"{exc}: `ars loop show` says what to do"
    if isinstance(exc, OSError) and said(exc) is None:
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        return 1, (f"cannot use{where}: {exc.strerror or ' '.join(str(exc).split())[:200]}; check that it is "
                   "a file you can read and write (move a stray directory or file of that name aside)")
    return said(exc)


def last_line(exc: BaseException) -> tuple[int, str]:
    """(exit code, line) for a failure no command handled (the last line of defence)."""
    from core.errors import failure_line

    return failure_line(exc)
