"""The ``ars`` console script.

``ars hook claude-code`` runs on every tool call Claude Code makes, each time
in a fresh process, so it goes straight to its handler: no typer, rich,
pydantic or core.api until a gate rule matches (then it needs them anyway).
Every other command line goes to the typer CLI in tui/cli.py.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) >= 2 and argv[0] == "hook" and argv[1] == "claude-code" \
            and not any(a in ("--help", "-h") for a in argv[2:]):
        # Everything ARS writes is private (as tui.cli.main sets it)
        os.umask(os.umask(0o077) | 0o077)
        from tui.agents.claude_code import run

        sys.exit(run(argv[2:]))
    from tui.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
