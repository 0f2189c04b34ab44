"""What the dashboard remembers between runs of a person's choices: the theme
(``<state>/dashboard.json``, 0600, written whole). A file that cannot be read is
as good as none: the defaults."""

from __future__ import annotations

import json
from pathlib import Path

FILE = "dashboard.json"


def load(state_dir: Path) -> dict:
    try:
        data = json.loads((Path(state_dir) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(state_dir: Path, **values) -> None:
    from core.api import atomic_write

    data = {**load(state_dir), **values}
    try:
        atomic_write(Path(state_dir) / FILE, json.dumps(data, indent=1) + "\n")
    except OSError:
        pass  # a preference not kept is no reason to stop the dashboard
