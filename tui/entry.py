"""The ``ars`` console script.

``ars hook claude-code`` runs on every tool call Claude Code makes, each time
in a fresh process, so it goes straight to its handler: no typer, rich,
pydantic or core.api until a gate rule matches (then it needs them anyway).
``ars recall ... --json`` (how agents and hooks recall) skips the typer
app and rich too (tui/fast_recall.py), and ``ars tui`` goes straight to the
dashboard (tui/launch.py: a person waits for its first paint). Every other
command line goes to the typer CLI in tui/cli/main.py.
"""

from __future__ import annotations

import os
import sys


def is_hook(argv: list[str]) -> bool:
    return len(argv) >= 2 and argv[0] == "hook" and argv[1] in ("claude-code", "hermes", "openclaw") \
        and not any(a in ("--help", "-h") for a in argv[2:])


def hook(args: list[str], agent: str = "claude-code") -> int:
    """``ars hook AGENT ARGS`` without the CLI: the exit code."""
    os.umask(os.umask(0o077) | 0o077)  # everything ARS writes is private (as tui.cli.main.main sets it)
    if agent == "hermes":
        from tui.agents.hermes import run
    elif agent == "openclaw":
        from tui.agents.openclaw import run
    else:
        from tui.agents.claude_code import run

    return run(args)


def main() -> None:
    argv = sys.argv[1:]
    recall = None
    if argv[:1] == ["recall"]:
        from tui.fast_recall import parse

        recall = parse(argv[1:])
    if is_hook(argv) or recall is not None:
        if recall is not None:  # `ars recall ... --json`, as agents call it: no CLI framework
            from tui.fast_recall import run

            os.umask(os.umask(0o077) | 0o077)
            code = run(recall)
        else:
            code = hook(argv[2:], argv[1])
        # Claude Code takes the answer when the process ends: skip the interpreter's
        # teardown (~100 ms once a held call loaded pydantic and core.api). Everything
        # the hook wrote is closed by now (ARS is used in `with` blocks); only the
        # standard streams are left to flush.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    if argv[:1] == ["tui"]:
        os.umask(os.umask(0o077) | 0o077)
        from tui.launch import tui_main

        code = tui_main(argv[1:])
        if code is not None:
            sys.stdout.flush()
            os._exit(code)  # the terminal is restored; every acknowledged write was fsync'd (tui.cli.main._exit_now)
    if argv[:1] == ["ingest"]:  # a store re-ingest that finds nothing new: no CLI framework (tui/fast_ingest.py)
        from tui.fast_ingest import unchanged

        code = unchanged(argv[1:])
        if code is not None:
            sys.stdout.flush()
            os._exit(code)
    from tui.cli.main import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
