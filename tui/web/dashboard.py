"""The process textual-serve starts for each browser session of ``ars serve``'s
dashboard: ``python -m tui.web.dashboard --state DIR [--view V]``.

It is ``ars tui`` without the terminal check: textual-serve runs it with
``TEXTUAL_DRIVER`` set to Textual's web driver, its stdin and stdout are pipes
to the server, and the browser is the terminal. Anything that stops it is one
line on stderr (the server prints it) and exit 2.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

WEB_DRIVER = "textual.drivers.web_driver:WebDriver"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tui.web.dashboard")
    parser.add_argument("--state", type=Path, default=None)
    parser.add_argument("--view", default="loops")
    parser.add_argument("--parent", type=int, default=0, help="ars serve's pid: exit when it does")
    opts = parser.parse_args(argv)
    if os.environ.get("TEXTUAL_DRIVER") != WEB_DRIVER:
        sys.stderr.write("error: this runs the dashboard for ars serve (under textual-serve); on a terminal run "
                         "`ars tui`\n")
        return 2
    os.umask(os.umask(0o077) | 0o077)  # everything ARS writes is private, as in `ars`
    from core.api import die_with_parent, no_dumps

    no_dumps()  # the passphrase is typed into this process and the key may be kept here
    if opts.parent:  # ars serve killed (even with SIGKILL): this one goes too, never an orphan holding the key
        die_with_parent(signal.SIGKILL)
        if os.getppid() != opts.parent:  # it died before the line above
            return 2
    from tui.launch import Refused, check_not_empty, check_view, open_store

    try:
        check_view(opts.view)
        check_not_empty(opts.state)
        ars = open_store(opts.state)
    except Refused as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    from tui.app import ArsApp

    with ars:
        ArsApp(ars, initial_mode=opts.view).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
