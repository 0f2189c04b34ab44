"""Open a state directory for ``ARS``: create it private (0700), refuse a missing one
when asked not to create, and make one an older ARS left group/world-readable private."""

from __future__ import annotations

from pathlib import Path

from core.errors import BadQuery
from core.infra.fsutil import private_dir, tighten_tree


def open_state_dir(state: Path, create: bool) -> None:
    if not state.is_dir():
        if not create:
            raise BadQuery(
                f"state directory {state} does not exist: run `ars ingest` first (a new team host: "
                f"`mkdir -p {state}`, then `ars sync run` pulls the namespace), "
                "or pass --state / set ARS_STATE_DIR to an existing one"
            )
        private_dir(state)
    elif state.stat().st_mode & 0o077:
        # written by an older ARS under umask 022: make it private once
        tighten_tree(state)
        private_dir(state)
