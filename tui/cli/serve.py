"""``ars serve``: the dashboard in a browser and an approvals page for a phone (tui/web/).

Loopback only unless ``--i-know-this-is-exposed``: the README tells a
supervisor away from the machine to forward the port over SSH
(``ssh -L 8765:127.0.0.1:8765 host``) rather than open it. The web stack
(aiohttp, textual-serve) is imported only when the command runs, so ``ars
recall`` and the agents' hooks never load it.

Exit codes: 0 stopped with Ctrl-C; 2 bad input (an exposed host without the
flag, a bad port, a state directory that does not exist); 1 the port cannot be bound.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from tui.cli.common import err, fail, open_ars, out

DEFAULT_PORT = 8765


def serve_command(
    state: Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")] = None,
    host: Annotated[str, typer.Option("--host", help="address to listen on (loopback unless --i-know-this-is-exposed)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on (0: any free port)")] = DEFAULT_PORT,
    exposed: Annotated[bool, typer.Option("--i-know-this-is-exposed", help="listen on a non-loopback address: "
                                          "anyone who can reach it and holds the token sees the inbox")] = False,
    new_token: Annotated[bool, typer.Option("--new-token", help="replace the access token (browsers holding the "
                                                                "old one must open the new URL)")] = False,
    show_url: Annotated[bool, typer.Option("--show-url", help="print the URL with the token and exit")] = False,
) -> None:
    """Serve the dashboard to a browser and an approvals page for a phone, behind a token
    (decisions are signed with the supervisor's key, unlocked by its passphrase typed in the page)."""
    from tui.web.access import is_loopback, token_path

    if not 0 <= port <= 65535:
        fail(f"--port {port}: give a port from 1 to 65535 (0 picks a free one)")
    if not is_loopback(host) and not exposed:
        fail(f"--host {host} is not a loopback address: anyone who can reach it could try the page; forward the "
             f"port over SSH instead (ssh -L {port or DEFAULT_PORT}:127.0.0.1:{port or DEFAULT_PORT} THIS-HOST), or "
             "pass --i-know-this-is-exposed")
    with open_ars(state) as ars:
        state_dir = ars.state_dir.resolve()
        pin = ars.supervisor_fingerprint()  # pinned now: a key put in the state directory later is refused
        lock_after = ars.settings.key_lock_after
    from tui.web.access import load_token
    from tui.web.server import url

    token = load_token(state_dir, renew=new_token)
    if show_url:
        out.print(url(host, port, token), highlight=False, soft_wrap=True)
        return
    try:
        import aiohttp  # noqa: F401
        import textual_serve  # noqa: F401
    except ImportError as exc:
        fail(f"ars serve needs {exc.name}: pip install textual-serve (or reinstall ars: pip install -e .)", 1)
    from tui.web.server import ServeServer

    server = ServeServer(state_dir=state_dir, host=host, port=port, token=token, pin=pin, lock_after=lock_after)

    def bound(actual: int) -> None:
        out.print(f"ars serve: open {url(host, actual, token)}", highlight=False, soft_wrap=True)
        from core.api import atomic_write

        try:  # the page's address without its token: what notifications link to (core/inbox/notify.py)
            atomic_write(token_path(state_dir).with_name("url"), url(host, actual) + "\n")
        except OSError:
            pass
        out.print(f"  approvals at /, the dashboard at /dashboard; the token is kept in {token_path(state_dir)} "
                  "(0600); Ctrl-C stops", highlight=False, soft_wrap=True)
        if pin is None:
            err.print("[yellow]warning:[/] no supervisor key: the page shows the inbox but decides nothing "
                      "(`ars supervisor init`, then restart ars serve)", highlight=False)
        if not is_loopback(host):
            err.print(f"[yellow]warning:[/] listening on {host}, not loopback (--i-know-this-is-exposed): the "
                      "traffic, token and passphrase included, is not encrypted", highlight=False)
        sys.stdout.flush()

    import asyncio

    try:
        asyncio.run(server.run(bound))
    except OSError as exc:
        fail(f"cannot listen on {host}:{port} ({exc.strerror or exc}): pick another --port, or stop what holds it", 1)
