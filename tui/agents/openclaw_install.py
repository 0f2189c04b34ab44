"""``ars install openclaw``: ARS's plugin, its MCP server and the startup context
merged into OpenClaw's config (``openclaw.json``) in one step.

The config is ``$OPENCLAW_CONFIG_PATH``, else ``$OPENCLAW_STATE_DIR/openclaw.json``,
else ``~/.openclaw/openclaw.json`` (``--config`` names it). What goes in:

* ``plugins.load.paths`` gets the plugin's folder (tui/agents/openclaw_plugin,
  shipped with ARS), and ``plugins.entries.ars-gate``: enabled, its config
  (the ``ars`` command, ``--state``, the supervisor key pinned now, the
  project, how long a held call waits) and its hook policy: the
  ``before_tool_call`` budget (``hooks.timeouts``, past the gate's wait, so
  OpenClaw never cuts a wait short into its own block) and
  ``allowConversationAccess`` for ``before_prompt_build``, which adds the
  startup context (``ars rehydrate``) to a session's first turn, OpenClaw's
  counterpart of Claude Code's SessionStart. A ``plugins.allow`` list gets
  the plugin's id.
* ``mcp.servers.ars``: ``ars mcp --state DIR --supervisor FP``.

As ``ars install claude-code`` (tui/agents/install.py, whose merging helpers this
uses): other entries are kept, ARS's own are brought up to date in place, a second
run changes nothing, a changed file is backed up first, ``--dry-run`` prints the
diff. OpenClaw's config may be JSON5 (comments, trailing commas): such a file
stops the installer before anything is written, with what to do.
"""

from __future__ import annotations

import os
from pathlib import Path

from tui.agents.install import FileChange, InstallError, _dump, _read, ars_command, merge_server, pinned_key, report

PLUGIN_ID = "ars-gate"
PLUGIN_DIR = Path(__file__).resolve().parent / "openclaw_plugin"
HOLD_GRACE_S = 20  # the plugin's margin past the wait (its HOLD_GRACE_S): the hook's start and last answer
MAX_HOOK_MS = 600_000  # OpenClaw's cap on hooks.timeouts values


def config_path(explicit: Path | None = None, home: Path | None = None) -> Path:
    if explicit:
        return Path(os.path.abspath(os.path.expanduser(str(explicit))))
    env = os.environ.get("OPENCLAW_CONFIG_PATH")
    if env:
        return Path(os.path.abspath(os.path.expanduser(env)))
    state = os.environ.get("OPENCLAW_STATE_DIR")
    if state:
        return Path(os.path.abspath(os.path.expanduser(state))) / "openclaw.json"
    return Path(home or os.environ.get("OPENCLAW_HOME") or Path.home()) / ".openclaw" / "openclaw.json"


def gate_wait(state: Path, pin: str | None) -> float:
    """How long a held call waits for the supervisor: the signed policy's timeout."""
    from core.api import gate_policy  # the gate's own policy loader, as the hooks read it

    gate, _ = gate_policy.load(str(state), pin)
    return float(gate.timeout)


def plan(*, state: Path, config: Path | None = None, project: Path | None = None, home: Path | None = None,
         ars: list[str] | None = None) -> list[FileChange]:
    """What installing would change (nothing is written): OpenClaw's config file."""
    state = Path(os.path.abspath(os.path.expanduser(str(state))))
    ars = list(ars or ars_command())
    pin = pinned_key(state)
    wait = gate_wait(state, pin)
    budget_ms = int(min(MAX_HOOK_MS, (wait + HOLD_GRACE_S) * 1000))
    if wait + HOLD_GRACE_S > MAX_HOOK_MS / 1000:
        wait = MAX_HOOK_MS / 1000 - HOLD_GRACE_S  # OpenClaw cuts a hook at 10 minutes: wait less than that
    plugin_config: dict = {"ars": ars, "state": str(state), "waitSeconds": wait}
    if pin:
        plugin_config["supervisor"] = pin
    if project is not None:
        root = Path(os.path.abspath(os.path.expanduser(str(project))))
        if not root.is_dir():
            raise InstallError(f"project directory {root} does not exist: pass --project DIR of an existing "
                               "directory (or leave it out: the agent's workspace is the project)")
        plugin_config["project"] = str(root)
    server = {"command": ars[0], "args": ars[1:] + ["mcp", "--state", str(state)] + (["--supervisor", pin] if pin else [])}
    return [_merge(config_path(config, home), plugin_config, budget_ms, server)]


def _obj(parent: dict, key: str, path: Path, where: str) -> dict:
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    if not isinstance(value, dict):
        raise InstallError(f"{path}: {where} is a {type(value).__name__}, not an object: fix it; nothing was written")
    return value


def _is_our_path(p: object) -> bool:
    return isinstance(p, str) and os.path.basename(os.path.normpath(p)) == PLUGIN_DIR.name \
        and os.path.basename(os.path.dirname(os.path.normpath(p))) == "agents"


def _merge(path: Path, plugin_config: dict, budget_ms: int, server: dict) -> FileChange:
    try:
        obj, text, mode, indent = _read(path)
    except InstallError as exc:
        if "not valid JSON" in str(exc):
            raise InstallError(f"{exc} -- OpenClaw also reads JSON5 (comments, trailing commas), which ARS does not "
                               "rewrite: remove them (`openclaw config get` shows the values) or add the plugin by "
                               f"hand: `openclaw plugins install --link {PLUGIN_DIR}`") from None
        raise
    notes: list[str] = []
    plugins = _obj(obj, "plugins", path, '"plugins"')
    if plugins.get("enabled") is False:
        notes.append(f"{path}: plugins.enabled is false, so OpenClaw loads no plugin: set it to true for ARS's gate")
    load = _obj(plugins, "load", path, "plugins.load")
    paths = load.get("paths")
    if paths is None:
        paths = load["paths"] = []
    if not isinstance(paths, list):
        raise InstallError(f"{path}: plugins.load.paths is a {type(paths).__name__}, not a list: fix it; "
                           "nothing was written")
    ours = str(PLUGIN_DIR)
    stale = [p for p in paths if _is_our_path(p) and p != ours]
    for p in stale:
        paths.remove(p)
        notes.append(f"plugins.load.paths: {p} replaced by {ours}")
    if ours not in paths:
        paths.append(ours)
    allow = plugins.get("allow")
    if isinstance(allow, list) and PLUGIN_ID not in allow:
        allow.append(PLUGIN_ID)
        notes.append(f"plugins.allow: {PLUGIN_ID} added")
    deny = plugins.get("deny")
    if isinstance(deny, list) and PLUGIN_ID in deny:
        notes.append(f"{path}: plugins.deny names {PLUGIN_ID}: OpenClaw will not load the gate until you remove it")
    entries = _obj(plugins, "entries", path, "plugins.entries")
    entry = _obj(entries, PLUGIN_ID, path, f"plugins.entries.{PLUGIN_ID}")
    if entry.get("enabled") is not True:
        entry["enabled"] = True
    hooks = _obj(entry, "hooks", path, f"plugins.entries.{PLUGIN_ID}.hooks")
    hooks["allowConversationAccess"] = True
    timeouts = _obj(hooks, "timeouts", path, f"plugins.entries.{PLUGIN_ID}.hooks.timeouts")
    timeouts["before_tool_call"] = budget_ms
    if entry.get("config") != plugin_config:
        if entry.get("config") is not None:
            notes.append(f"plugins.entries.{PLUGIN_ID}.config brought up to date")
        entry["config"] = plugin_config
    mcp = _obj(obj, "mcp", path, '"mcp"')
    servers = _obj(mcp, "servers", path, "mcp.servers")
    merge_server(servers, "ars", server, "MCP server 'ars'", path, notes)
    import json

    new = _dump(obj, indent)
    if text is not None and text.strip() and json.loads(text) == obj:
        new = text  # nothing to change: keep the file byte for byte
    return FileChange(path, text, new, notes, mode)


def cli(*, state: Path, project: Path | None, dry_run: bool, write) -> int:
    """``ars install openclaw`` as the CLI runs it: lines through ``write``; the exit code."""
    try:
        changes = plan(state=state, project=project)
    except InstallError as exc:
        import sys

        sys.stderr.write(f"error: {' '.join(str(exc).split())}\n")
        return 2
    report(changes, pin=pinned_key(state), unpinned="held calls are blocked", dry_run=dry_run, write=write,
           done=f"OpenClaw now asks ARS ({state}) before risky tool calls (plugin {PLUGIN_ID}, {PLUGIN_DIR}): "
                "`ars inbox list` shows what waits for you; a running Gateway picks the change up on its next "
                "reload.")
    return 0
