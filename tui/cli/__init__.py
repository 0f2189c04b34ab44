"""The ``ars`` command line (typer + rich): one module per command group, registered in
tui/cli/main.py; tui/cli/common.py holds what they share.

This file sets up the process for every way in (tui/entry.py's fast paths import it
without typer): stdlib only.
"""

import os

# Every call is a fresh process (agents' hooks too): pydantic's plugin lookup scans every
# installed distribution's entry points (~50 ms), and ARS uses none. Set here, before any
# command module imports pydantic.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def private_umask() -> None:
    """Everything ARS writes is private (transcripts hold secrets): the core sets
    0600/0700 on what it creates; the umask covers what libraries create."""
    os.umask(os.umask(0o077) | 0o077)
