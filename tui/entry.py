"""The ``ars`` console script: which way a command line goes.

``ars hook AGENT`` runs on every tool call an agent makes, each time in a fresh
process, so it goes straight to its handler: no typer, rich, pydantic or core.api
until a gate rule matches (then it needs them anyway). ``ars recall ... --json``
(how agents and hooks recall; tui/fast_recall.py) and ``ars ingest STORE --json``
finding nothing new (tui/fast_ingest.py) skip the typer app and rich too,
``ars mcp`` over stdio answers the agent's handshake before anything heavy loads
(tui/agents/mcp_front.py: agents give MCP servers ~1.5 s), and ``ars tui`` goes
straight to the dashboard (tui/launch.py: a person waits for its first paint);
these read their command lines with tui/fast_args.py and hand anything else to
the typer CLI in tui/cli/, as every other command line.
"""

from __future__ import annotations

import os
import sys

from tui.cli import private_umask  # stdlib only: no typer


def is_hook(argv: list[str]) -> bool:
    return len(argv) >= 2 and argv[0] == "hook" and argv[1] in ("claude-code", "hermes", "openclaw") \
        and not any(a in ("--help", "-h") for a in argv[2:])


def hook(args: list[str], agent: str = "claude-code") -> int:
    """``ars hook AGENT ARGS`` without the CLI: the exit code."""
    private_umask()
    if agent == "hermes":
        from tui.agents.hermes import run
    elif agent == "openclaw":
        from tui.agents.openclaw import run
    else:
        from tui.agents.claude_code import run

    return run(args)


def _fast(argv: list[str]) -> int | None:
    """The exit code of a command line a fast path answered; None: the typer CLI's."""
    if is_hook(argv):
        return hook(argv[2:], argv[1])
    if argv[:1] == ["recall"]:  # `ars recall ... --json`, as agents call it
        from tui.fast_recall import parse, run

        args = parse(argv[1:])
        if args is not None:
            private_umask()
            return run(args)
    elif argv[:1] == ["tui"]:
        private_umask()
        from tui.launch import tui_main

        return tui_main(argv[1:])  # the terminal is restored by now
    elif argv[:1] == ["mcp"]:  # an agent starting ARS's MCP server waits for its handshake
        private_umask()
        from tui.agents.mcp_front import main as mcp_main

        return mcp_main(argv[1:])
    elif argv[:1] == ["ingest"]:  # a store re-ingest that finds nothing new
        from tui.fast_ingest import unchanged

        return unchanged(argv[1:])
    return None


def main() -> None:
    if any(a.startswith("--passphrase-fd") for a in sys.argv[1:]):  # read and closed before anything else
        from tui.cli.passphrase import take_early

        take_early(sys.argv[1:])
    code = _fast(sys.argv[1:])
    if code is None:
        from tui.cli.main import main as cli_main

        cli_main()
        return
    # Claude Code takes the answer when the process ends: skip the interpreter's
    # teardown (~100 ms once a held call loaded pydantic and core.api), as the typer
    # CLI does (tui.cli.main._exit_now). Everything written is closed and every
    # acknowledged write fsync'd by now (ARS is used in `with` blocks); only the
    # standard streams are left to flush.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
