"""``ars recall ... --json`` without the CLI framework.

Agents and hooks call recall as a fresh process and read its JSON; building
the typer app and loading rich cost ~100 ms of each call, a third of it.
This path answers exactly the command lines it fully understands (a query,
``-k``, ``--tiers``, ``--state``, ``--json``); anything else (``--help``,
``--explain``, a table for a person, a malformed option) goes to the full CLI
in tui/cli/main.py, which answers and reports errors as it always has. The JSON,
the one-line errors and the exit codes are the same either way (tested).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass
class RecallArgs:
    query: str
    k: int = 10
    tiers: str | None = None
    state: str | None = None
    scope: str | None = None  # agent=NAME,host=NAME (the full CLI parses it; the daemon is handed it)


def parse(argv: list[str]) -> RecallArgs | None:
    """The arguments after ``recall``, or None for the full CLI to handle."""
    query: str | None = None
    opts: dict[str, str] = {}
    as_json = False
    i, rest_are_args = 0, False
    while i < len(argv):
        a = argv[i]
        if rest_are_args or not a.startswith("-") or a == "-":
            if query is not None:
                return None  # a second query: let the CLI say so
            query = a
        elif a == "--":
            rest_are_args = True
        elif a == "--json":
            as_json = True
        elif a in ("-k", "--tiers", "--state") and i + 1 < len(argv) and a not in opts:
            opts[a] = argv[i + 1]
            i += 1
        else:
            return None
        i += 1
    if not as_json or query is None:
        return None
    try:
        k = int(opts.get("-k", "10"))
    except ValueError:
        return None
    return RecallArgs(query=query, k=k, tiers=opts.get("--tiers"), state=opts.get("--state"))


def run(args: RecallArgs) -> int:
    """Recall and print the ``RecallResult`` as JSON; the exit code.

    A warm recall daemon of this state directory and configuration answers
    when there is one (tui/daemon/); otherwise this process answers and then
    leaves one behind for the next call (``ARS_RECALL_DAEMON=off``: never)."""
    from tui.daemon import client

    reply = client.recall(args.query, args.k, args.tiers, args.state)
    if reply is not None:
        code, out, err = reply["code"], reply.get("stdout", ""), reply.get("stderr", "")
    else:
        code, out, err = answer(args)
    sys.stdout.write(out)
    sys.stderr.write(err)
    if reply is None and code == 0:
        sys.stdout.flush()  # the answer is out before a daemon is started
        client.spawn(args.state)
    return code


def answer(args: RecallArgs, ars=None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``ars recall --json``: by a new ARS on
    the state directory, or by ``ars`` (the recall daemon's, kept open)."""
    from pathlib import Path

    from pydantic import ValidationError

    from core.api import ARS, BadInput
    from core.config import config_error, load_settings
    from core.errors import failure_line

    try:
        if ars is not None:
            result = ars.recall(args.query, k=args.k, tiers=args.tiers, scope=args.scope)
        else:
            settings = load_settings(state_dir=Path(args.state) if args.state is not None else None)
            with ARS(settings, create=False) as opened:
                result = opened.recall(args.query, k=args.k, tiers=args.tiers, scope=args.scope)
    except ValidationError as exc:
        return 2, "", _error(f"bad configuration: {config_error(exc)}")
    except BadInput as exc:
        return 2, "", _error(str(exc))
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (as tui.cli.main.main)
        if os.environ.get("ARS_DEBUG"):
            raise
        code, message = failure_line(exc)
        return code, "", _error(message)
    return 0, result.model_dump_json() + "\n", ""


def _error(message: str) -> str:
    return f"error: {message}\n"
