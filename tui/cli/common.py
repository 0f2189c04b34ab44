"""What every ``ars`` command group shares: the consoles, the common options, opening
the store for a state directory, failing with one line, and the umask.

Exit codes: 0 ok, 1 failed, 2 bad input (one line on stderr saying what was wrong
and what to do); tui/cli/error_map.py maps errors to that line and code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape as _esc

from core.api import ARS
from tui.cli import error_map

out = Console()
err = Console(stderr=True)

StateOpt = Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
JsonTextOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of text")]

STATUS_STYLE = {"ok": "green", "empty": "yellow", "skipped": "dim", "down": "red bold",
                "timeout": "red", "error": "red"}
LOOP_STYLE = {"initialized": "dim", "active": "cyan", "waiting_human": "yellow bold", "blocked": "red bold",
              "done": "green bold", "aborted": "red"}


def fail(message: str, code: int = 2) -> NoReturn:
    # the message is text, not markup: "pip install 'ars[e5]'" or a path with brackets prints whole
    err.print(f"[red]error:[/] {_esc(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def fail_on(exc: BaseException, said: tuple[int, str] | None = None) -> NoReturn:
    """Fail with ``exc``'s line and exit code (tui/cli/error_map.py); an error ARS does not say rises."""
    said = said or error_map.said(exc)
    if said is None:
        raise exc
    fail(said[1], said[0])


def open_ars(state: Path | None, *, create: bool = False) -> ARS:
    from core.api import load_settings

    try:
        return ARS(load_settings(state_dir=state), create=create)
    except Exception as exc:  # noqa: BLE001 - said in one line when it is ARS's (else it rises)
        fail_on(exc, error_map.opening(exc))


def call(fn, *, second_decision_fails: bool = False):
    """Run a loop or inbox API call; its errors are said in one line (tui/cli/error_map.py:
    people's errors exit 2, failures 1)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - said in one line when it is ARS's (else it rises)
        fail_on(exc, error_map.of_loop_call(exc, second_decision_fails=second_decision_fails))


def warn(lines) -> None:
    for line in lines:
        err.print(f"[yellow]warning:[/] {_esc(line)}", highlight=False, soft_wrap=True)
