"""The SDK server's answers to the handshake, recorded for ``ars mcp``'s front.

tui/agents/mcp_front.py answers ``initialize`` and the list methods from
mcp_catalog.json before the SDK has even loaded. The file is recorded from
the real server by tui/agents/mcp_record.py (its answers are the SDK's, byte for
byte, but for the server's version, filled in at run time, and the negotiated
protocol version). Regenerate it after changing a tool::

    python -m tui.agents.mcp_record

tests/tui/agents/test_mcp_front.py fails while the file and the server differ.
Stdlib only: the front reads it first thing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CATALOG = Path(__file__).with_name("mcp_catalog.json")
CATALOG_METHODS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def load(path: Path = CATALOG) -> dict | None:
    """The recorded answers; None when the file is missing or damaged (the SDK then answers all)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("initialize"), dict) \
        and isinstance(data.get("results"), dict) and isinstance(data.get("handshake_versions"), list)
    return data if ok and data["handshake_versions"] else None


def server_version() -> str:
    """The installed ARS's version: the server's ``serverInfo.version``. Read from the name of
    its ``ars-<version>.dist-info`` (one directory listing; ``importlib.metadata`` scans every
    distribution, ~20 ms of the handshake)."""
    import sys

    for folder in sys.path:
        try:
            names = os.listdir(folder or ".") if folder.endswith("site-packages") else ()
        except OSError:
            continue
        for name in names:
            if name.startswith("ars-") and name.endswith(".dist-info"):
                return name[len("ars-"):-len(".dist-info")]
    try:
        from importlib.metadata import version

        return version("ars")
    except Exception:  # noqa: BLE001 - a source checkout without an install
        return "0"
