"""One recall, without the CLI framework: ``RecallArgs`` and the answer shared by the
typer command (tui/cli/recall.py), the fast path and the recall daemon
(tui/daemon/server.py). A recall option is added here once (a field of
``RecallArgs`` and its entry in ``OPTIONS``), and to the typer command's options.

The fast path: agents and hooks call ``ars recall ... --json`` as a fresh process
and read its JSON; building the typer app and loading rich cost ~100 ms of each
call, a third of it. It answers exactly the command lines it fully understands
(a query, ``OPTIONS``, ``--json``: tui/fast_args.py); anything else (``--help``,
``--explain``, a table for a person, a malformed option) goes to the full CLI in
tui/cli/, which answers and reports errors as it always has. The JSON, the
one-line errors and the exit codes are the same either way (tested). Stdlib only
until a recall runs.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple

from tui import fast_args

# A named tuple, not a dataclass: ``dataclasses`` imports ``inspect`` (~9 ms of every fresh
# ``ars recall --json``, python -X importtime); ``collections`` is loaded by the interpreter already.
_Fields = namedtuple("_Fields", ("query", "k", "tiers", "scope", "state"), defaults=(10, None, None, None))


class RecallArgs(_Fields):
    """query; k; tiers; scope (agent=NAME,host=NAME); state (the state directory: a daemon
    serves one, so it is never sent to it)."""

    __slots__ = ()

    def request(self) -> dict:
        """The recall daemon's request for this recall."""
        return {"op": "recall", **{k: v for k, v in self._asdict().items() if k != "state"}}

    @classmethod
    def from_request(cls, message: dict) -> "RecallArgs":
        """The recall a daemon was asked for; KeyError, TypeError or ValueError when malformed."""
        return cls(query=message["query"], k=int(message.get("k", 10)), tiers=message.get("tiers"),
                   scope=message.get("scope"))


# the options of `ars recall` the fast path reads: the command-line name -> (field, type)
OPTIONS = {"-k": ("k", int), "--tiers": ("tiers", str), "--scope": ("scope", str), "--state": ("state", str)}


def parse(argv: list[str]) -> RecallArgs | None:
    """The arguments after ``recall``, or None for the full CLI to handle."""
    got = fast_args.parse(argv, options=tuple(OPTIONS), flags=("--json",))
    if got is None or "--json" not in got.flags or len(got.args) != 1:
        return None  # no --json (a table for a person), no query or a second one: the CLI's
    values = {}
    for name, text in got.options.items():
        key, kind = OPTIONS[name]
        try:
            values[key] = kind(text)
        except ValueError:
            return None  # -k ten: let the CLI say so
    return RecallArgs(query=got.args[0], **values)


def run(args: RecallArgs) -> int:
    """Recall and print the ``RecallResult`` as JSON; the exit code.

    A warm recall daemon of this state directory and configuration answers
    when there is one (tui/daemon/); otherwise this process answers and then
    leaves one behind for the next call (``ARS_RECALL_DAEMON=off``: never)."""
    from tui.daemon import client

    reply = client.recall(args)
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


def recall(args: RecallArgs, ars):
    """The ``RecallResult`` of ``args`` from an open ARS."""
    return ars.recall(args.query, k=args.k, tiers=args.tiers, scope=args.scope)


def answer(args: RecallArgs, ars=None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``ars recall --json``: by a new ARS on
    the state directory, or by ``ars`` (the recall daemon's, kept open)."""
    from pathlib import Path

    from core.api import ARS, load_settings
    from tui.cli import error_map

    try:
        if ars is not None:
            result = recall(args, ars)
        else:
            settings = load_settings(state_dir=Path(args.state) if args.state is not None else None)
            with ARS(settings, create=False) as opened:
                result = recall(args, opened)
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (as tui.cli.main.main)
        said = error_map.opening(exc)
        if said is None:
            if os.environ.get("ARS_DEBUG"):
                raise
            said = error_map.last_line(exc)
        code, message = said
        return code, "", f"error: {message}\n"
    return 0, result.model_dump_json() + "\n", ""
