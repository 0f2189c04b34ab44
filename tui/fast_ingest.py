"""``ars ingest STORE... --json`` when nothing changed, without the CLI framework.

An agent's hook or a timer runs ``ars ingest ~/.openclaw --json`` again and again;
most runs find nothing new. Loading typer, rich, pydantic and the parsers costs most
of a second on a busy machine, to then compare a few file signatures. This path
answers exactly that case: every path is an agent store (or a folder holding only
stores' files), each store's signature is the one its cursor recorded, and Neo4j is
not configured (the full path would push the ledger's backlog). Anything else (a
plain transcript file, a changed store, another option, a person's table) goes to
the full CLI, which answers as it always has; the JSON is the same (tested).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def parse(argv: list[str]) -> tuple[list[str], str | None] | None:
    """(paths, --state) of ``ingest PATH... --json [--state DIR]``, or None for the full CLI."""
    from tui import fast_args

    got = fast_args.parse(argv, options=("--state",), flags=("--json",))
    if got is None or "--json" not in got.flags or not got.args or "-" in got.args:
        return None  # a person's table, no path, or stdin: the CLI's
    return got.args, got.options.get("--state")


def _only_store_files(folder: Path, owned: set[str]) -> bool:
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            if os.path.realpath(os.path.join(dirpath, name)) not in owned:
                return False
    return True


def unchanged(argv: list[str]) -> int | None:
    """Print the report and return 0 when nothing changed; None: let the full CLI run."""
    parsed = parse(argv)
    if parsed is None or os.environ.get("ARS_NEO4J_URI"):
        return None
    paths, state = parsed
    from core.hook_api import StoreCursors, find_stores, store_signature, wal_in_use  # not core.api: see core/hook_api.py

    state_dir = Path(state or os.environ.get("ARS_STATE_DIR") or "state")
    if not (state_dir / "store_cursors.json").is_file():
        return None
    try:
        units, owned = find_stores(paths)
        if not units or any(Path(p).is_dir() and not _only_store_files(Path(p), owned)
                            or not Path(p).is_dir() and os.path.realpath(p) not in owned for p in paths):
            return None
        cursors = StoreCursors(state_dir)
        # a running agent's store is never called unchanged here: its WAL can look the same (layout.wal_in_use)
        if any(cursors.signature(u.key) != store_signature(u) or wal_in_use(u) for u in units):
            return None
    except OSError:
        return None
    report = {"files": len(units), "episodes_added": 0, "duplicates_skipped": 0, "malformed": [],
              "unchanged_files": len(units), "failed_files": 0, "skipped_files": 0, "sync": None,
              "unsupported": [], "unreadable": []}
    sys.stdout.write(json.dumps(report, separators=(",", ":")) + "\n")
    return 0
