"""The ``ars`` command (typer + rich): the app, its commands in the order ``ars --help``
lists them, and the process's exit. Each command group lives in its own module of
tui/cli/ and calls ``core.api`` only; tui/cli/common.py holds what they share.

Exit codes: 0 ok, 1 failed, 2 bad input (one line on stderr saying what was
wrong and what to do). The dashboard is imported only by the commands that
open it, so ``ars recall`` never loads textual.
"""

from __future__ import annotations

import os
import sys

import typer

from tui.cli import error_map
from tui.cli import agents, context, dashboard, govern, ingest, loop, recall, store, sync
from tui.cli import private_umask
from tui.cli.common import err
from tui.cli.daemon import daemon_app
from tui.cli.inbox import inbox_app
from tui.cli.mcp import mcp_command
from tui.cli.serve import serve_command  # ars serve: aiohttp loads only when it runs
from tui.cli.short_help import fill_short_help
from tui.cli.supervisor import gate_app, supervisor_app
from rich.markup import escape as _esc

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="ARS: episodic memory, a bounded loop and a dashboard for personal AI agents.")

# typer lists the commands in this order, then the groups
for name, command in [
    ("recall", recall.recall), ("context", context.context_command), ("ingest", ingest.ingest), ("enrich", ingest.enrich), ("rebuild", store.rebuild),
    ("doctor", store.doctor), ("mcp", mcp_command), ("forget", govern.forget_command),
    ("export", govern.export_command), ("redact", govern.redact_command), ("hook", agents.hook_command),
    ("install", agents.install_command), ("serve", serve_command), ("check", loop.check),
    ("rehydrate", loop.rehydrate), ("tui", dashboard.tui_command), ("demo", dashboard.demo),
]:
    app.command(name)(command)
for name, group in [("sync", sync.sync_app), ("loop", loop.loop_app), ("inbox", inbox_app),
                    ("supervisor", supervisor_app), ("gate", gate_app), ("daemon", daemon_app)]:
    app.add_typer(group, name=name)
fill_short_help(app)  # each command's help on one line in the command lists (tui/cli/short_help.py)


def _lean_app(first: list[str]) -> typer.Typer | None:
    """The ``ars`` app with only the command being run.

    typer builds the click command of every registered function before it
    parses (~150 ms for ARS's two dozen, on every fresh process an agent hook
    starts); a command line that names one builds just that one. ``ars``,
    ``ars --help`` and unknown names use the whole app, so help and "no such
    command" read as before."""
    if not first:
        return None
    name = first[0]
    lean = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                       help=app.info.help)
    for info in app.registered_commands:
        if (info.name or info.callback.__name__.replace("_", "-")) == name:
            lean.registered_commands.append(info)
            break
    for group in app.registered_groups:
        if group.name == name:
            lean.registered_groups.append(group)
            break
    if not lean.registered_commands and not lean.registered_groups:
        return None
    lean.callback()(_root)  # a group, so `ars NAME ...` parses as it does with every command
    return lean


def _root() -> None:
    """ARS: episodic memory, a bounded loop and a dashboard for personal AI agents."""


INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
INTERRUPTED_LINE = ("interrupted: anything acknowledged before is kept (ars rebuild and ars sync backfill go on "
                    "from where they stopped when run again)")


def main() -> None:
    private_umask()
    from tui.cli.passphrase import take_early

    take_early(sys.argv[1:])  # (tui/entry.py did it already when `ars` is the console script)
    code: int | str | None = 0
    try:
        (_lean_app(sys.argv[1:2]) or app)()  # usage errors and typer.Exit end in sys.exit inside
    except SystemExit as done:
        code = done.code
        if code == INTERRUPTED:  # typer turns a Ctrl-C inside a command into Exit(130), silently
            err.print(INTERRUPTED_LINE, highlight=False)
    except KeyboardInterrupt:
        err.print(INTERRUPTED_LINE, highlight=False)
        code = INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("ARS_DEBUG"):
            raise
        code, message = error_map.last_line(exc)
        err.print(f"[red]error:[/] {_esc(message)}", highlight=False, soft_wrap=True)
    _exit_now(code)


def _exit_now(code: int | str | None) -> None:
    """Leave without the interpreter's teardown (~110 ms of freeing modules,
    ~240 ms with the Neo4j driver loaded: a tenth of a fresh `ars recall`).
    Safe because nothing is left to write: every acknowledged write was
    fsync'd when it returned, SQLite commits are in its WAL, the dashboard has
    restored the terminal, and the threads left are idle pools or a Neo4j
    search that recall no longer waits for."""
    if isinstance(code, str):
        err.print(code, highlight=False)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed pipe: nothing more can be said
    os._exit(code or 0)


if __name__ == "__main__":
    main()
