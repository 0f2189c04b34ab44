"""What ``ars install hermes`` adds for ARS's memory in every turn, beside the hooks.

* ``<hermes home>/plugins/ars/``: the memory provider (tui/agents/hermes_provider/:
  ``__init__.py``, ``ars_process.py`` and ``plugin.yaml``, copied as shipped) and ``ars.json``, the
  command the provider starts (``ars hook hermes --serve --state DIR``);
* ``memory.provider: ars`` in config.yaml (``memory_setting``, merged by
  tui/agents/install_hermes.py); Hermes runs one external memory provider, so one
  the user chose is left as it is, with a note saying how to switch;
* whether the Hermes on PATH can speak MCP at all (``mcp_problem``): without the
  SDK in its virtualenv Hermes offers no MCP tool, ARS's included, and says nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tui.agents.install import FileChange, InstallError

PROVIDER = "ars"
SHIPPED = Path(__file__).with_name("hermes_provider")
FILES = ("__init__.py", "ars_process.py", "plugin.yaml")
CONFIG = "ars.json"


def serve_command(state: Path, ars: list[str]) -> list[str]:
    return list(ars) + ["hook", "hermes", "--serve", "--state", str(state)]


def plugin_changes(home: Path, state: Path, ars: list[str]) -> list[FileChange]:
    """The provider's files in ``home/plugins/ars/``: as shipped, and its ``ars.json``."""
    folder = home / "plugins" / PROVIDER
    changes = []
    for name in FILES:
        new = (SHIPPED / name).read_text(encoding="utf-8")
        old, mode = _read(folder / name)
        changes.append(FileChange(folder / name, old, new, [], mode))
    config = {"command": serve_command(state, ars), "state": str(state)}
    old, mode = _read(folder / CONFIG)
    new = json.dumps(config, indent=2, sort_keys=True) + "\n"
    notes = [f"{folder}: ARS's memory provider (prefetch, sync_turn, ars_recall, ars_get), started by Hermes "
             "as `ars hook hermes --serve`"] if old != new else []
    changes.append(FileChange(folder / CONFIG, old, new, notes, mode))
    return changes


def _read(path: Path) -> tuple[str | None, int | None]:
    try:
        return path.read_text(encoding="utf-8"), path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path} cannot be read ({exc}): move it aside; nothing was written") from None


def memory_setting(doc: dict, path: Path, notes: list[str]) -> None:
    """``memory.provider: ars`` in the config mapping ``doc`` (see the module's docstring)."""
    from ruamel.yaml.comments import CommentedMap

    memory = doc.get("memory")
    if memory is None:
        memory = doc["memory"] = CommentedMap()
    if not isinstance(memory, dict):
        raise InstallError(f"{path}: memory is a {type(memory).__name__}, not a mapping of settings: fix it; "
                           "nothing was written")
    have = memory.get("provider")
    if have == PROVIDER:
        return
    if isinstance(have, str) and have.strip():
        notes.append(f"{path}: memory.provider is {have!r}, left as it is (Hermes runs one memory provider): set "
                     f"memory.provider: {PROVIDER} for ARS's memory in every turn")
        return
    memory["provider"] = PROVIDER
    notes.append(f"{path}: memory.provider: {PROVIDER} (ARS recalls into every turn and captures each one)")


def hermes_python(hermes: str | None = None) -> str | None:
    """The Python of the ``hermes`` on PATH (its console script's ``#!`` line), or None."""
    found = hermes or shutil.which("hermes")
    if not found:
        return None
    try:
        with open(os.path.realpath(found), "rb") as fh:
            first = fh.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[1])
    return words[0] if os.access(words[0], os.X_OK) else None


def mcp_problem(hermes: str | None = None) -> str | None:
    """A line for the user when the Hermes found here cannot use MCP servers; None when it can
    (or when there is no Hermes on PATH to ask: said as such)."""
    python = hermes_python(hermes)
    if python is None:
        return ("could not find Hermes (`hermes` on PATH) to check that it has MCP support: without the `mcp` "
                "package in Hermes' Python, ARS's MCP tools (request_approval, remember...) are not offered; "
                "add it with `<hermes python> -m pip install 'hermes-agent[mcp]'`")
    ask = ("import importlib.metadata as m, importlib.util as u, sys\n"
           "try: print(m.version('hermes-agent'))\nexcept Exception: print('')\n"
           "sys.exit(u.find_spec('mcp') is None)")
    try:
        r = subprocess.run([python, "-c", ask], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not ask Hermes' Python {python} whether it has MCP support ({exc})"
    if r.returncode == 0:
        return None
    version = r.stdout.strip()
    spec = f"hermes-agent[mcp]=={version}" if version else "hermes-agent[mcp]"
    return (f"Hermes' Python ({python}) has no MCP support: Hermes offers no MCP tool, ARS's included "
            f"(request_approval, remember...), and says nothing; add it: {python} -m pip install '{spec}' "
            "(ARS's per-turn memory and its ars_recall/ars_get tools work without it)")
