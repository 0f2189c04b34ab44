"""Opening the dashboard on a state directory: the checks made before the first
paint, shared by ``ars tui`` (straight from tui/entry.py, without the typer
CLI: a person waits for the first paint) and ``ars demo`` (through tui/cli/main.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

VIEWS = ("loops", "inbox", "recall", "checkpoints", "health", "context")


class Refused(Exception):
    """The dashboard cannot open: one line for a person (exit 2)."""


def check_view(view: str) -> None:
    if view not in VIEWS:
        raise Refused(f"unknown view {view!r}: choose {', '.join(VIEWS)}")


def check_terminal() -> None:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise Refused("the dashboard needs a terminal (stdin and stdout a TTY); `ars loop list` and "
                      "`ars recall` work without one")


def check_not_empty(state: Path | None) -> None:
    """An empty directory is left as it is (opening a store creates memory.sqlite)."""
    from core.api import load_settings, state_kind

    try:
        target = Path(load_settings(state_dir=state).state_dir)
    except ValueError:
        return  # a bad ARS_* variable: opening the store says so
    if target.is_dir() and state_kind(target) == "empty":
        raise Refused(f"{target} holds no ARS state yet (it is empty), so there is nothing to supervise: "
                      f"`ars demo --state {target}` seeds a demo there; `ars ingest --state {target} FILES` or "
                      f"`ars loop run --state {target} ...` starts a real one")


def open_store(state: Path | None):
    """The ARS of ``state``; a bad configuration or store is Refused."""
    from core.api import ARS, load_settings
    from tui.cli import error_map

    try:
        return ARS(load_settings(state_dir=state), create=False)  # a missing directory is a typo, not a new store
    except Exception as exc:  # noqa: BLE001 - said in one line when it is ARS's (else it rises)
        said = error_map.opening(exc)
        if said is None:
            raise
        raise Refused(said[1]) from None


def run(ars, *, view: str = "loops", record_only: bool = False) -> None:
    check_view(view)
    check_terminal()
    from core.api import no_dumps
    from tui.app import ArsApp

    no_dumps()  # the passphrase is typed into this process and the key kept here (core/inbox/key_memory.py)

    ArsApp(ars, resume_in_process=not record_only, initial_mode=view).run()


def parse_tui_args(args: list[str]) -> dict | None:
    """``ars tui``'s options, or None for anything else (``--help``, a typo; ``--state=``
    forms are fine): then the typer CLI parses the line and says what is wrong."""
    from tui import fast_args

    got = fast_args.parse(args, options=("--state", "--view"), flags=("--record-only",))
    if got is None or got.args:
        return None
    state = got.options.get("--state")
    return {"state": None if state is None else Path(state), "view": got.options.get("--view", "loops"),
            "record_only": "--record-only" in got.flags}


def tui_main(args: list[str]) -> int | None:
    """``ars tui ARGS`` without the CLI framework; None when the line is the CLI's to parse."""
    opts = parse_tui_args(args)
    if opts is None:
        return None
    try:
        check_view(opts["view"])
        check_not_empty(opts["state"])
        ars = open_store(opts["state"])
    except Refused as exc:
        _say(str(exc))
        return 2
    with ars:
        try:
            run(ars, view=opts["view"], record_only=opts["record_only"])
        except Refused as exc:
            _say(str(exc))
            return 2
    return 0


def _say(message: str) -> None:
    red = sys.stderr.isatty()
    sys.stderr.write(("\x1b[31merror:\x1b[0m " if red else "error: ") + message + "\n")
