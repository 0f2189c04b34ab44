"""``ars daemon``: the state directory's recall daemons (tui/daemon/).

``status`` lists every daemon listening for this state directory, one per
configuration and version of ARS that asked, and marks the one this shell's
settings would use; ``stop`` stops them (the next ``ars recall --json``
starts a fresh one unless ``ARS_RECALL_DAEMON=off``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

daemon_app = typer.Typer(no_args_is_help=True,
                         help="The recall daemons that keep fresh `ars recall --json` calls warm.")

StateOpt = Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of text")]


def _daemons(state: Optional[Path]) -> tuple[Path, list[dict]]:
    """(socket directory, each answering daemon's status) of a state directory."""
    from tui.daemon import address, client

    st = address.state_path(state)
    sock_dir = address.socket_dir(st)
    found = []
    for sock in sorted(sock_dir.glob("recall-*.sock")) if sock_dir.is_dir() else []:
        status = client.request(sock, {"op": "status"}, timeout=2.0, state=st)
        if status is not None and "pid" in status:
            found.append(status)
    return sock_dir, found


@daemon_app.command("status")
def status(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Each recall daemon of the state directory: pid, answers served, idle time."""
    from tui.daemon import address

    sock_dir, found = _daemons(state)
    mine = address.fingerprint()
    for d in found:
        d["current"] = d.get("fingerprint") == mine
    if as_json:
        sys.stdout.write(json.dumps({"mode": address.mode(), "socket_dir": str(sock_dir), "daemons": found}) + "\n")
        return
    mode = address.mode()
    if not found:
        hint = ("the next `ars recall --json` starts one" if mode == "auto"
                else "ARS_RECALL_DAEMON=off: fresh processes answer by themselves")
        sys.stdout.write(f"no recall daemon for {address.state_path(state)} ({hint})\n")
        return
    for d in found:
        up = time.time() - float(d.get("started", time.time()))
        sys.stdout.write(
            f"pid {d['pid']}{' (this shell’s settings)' if d['current'] else ''}: served {d.get('served', 0)}, "
            f"up {up:.0f} s, idle {d.get('idle_s', 0):.0f} s of {d.get('idle_exit_s', 0):.0f}, "
            f"{'ready' if d.get('ready') else 'warming up'}, RSS {_mb(d.get('rss_mb'))} (peak {_mb(d.get('rss_peak_mb'))});"
            f" {d.get('socket')}\n")


def _mb(v) -> str:
    return f"{v:,.0f} MB" if isinstance(v, (int, float)) and v == v else "?"


@daemon_app.command("stop")
def stop(state: StateOpt = None) -> None:
    """Stop every recall daemon of the state directory."""
    from tui.daemon import client

    sock_dir, found = _daemons(state)
    for d in found:
        client.request(Path(d["socket"]), {"op": "stop"}, timeout=2.0)
    sys.stdout.write(f"stopped {len(found)} recall daemon{'s' if len(found) != 1 else ''}\n")
