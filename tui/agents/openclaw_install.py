"""``ars install openclaw``: ARS's plugin, its MCP server and its memory in every
turn merged into OpenClaw's config (``openclaw.json``) in one step.

The config is ``$OPENCLAW_CONFIG_PATH``, else ``$OPENCLAW_STATE_DIR/openclaw.json``,
else ``~/.openclaw/openclaw.json`` (``--config`` names it). What goes in:

* ``plugins.load.paths`` gets the plugin's folder (tui/agents/openclaw_plugin,
  shipped with ARS), and ``plugins.entries.ars-gate``: enabled, its config
  (the ``ars`` command, ``--state``, the supervisor key pinned now, the
  project, how long a held call waits) and its hook policy: the
  ``before_tool_call`` budget (``hooks.timeouts``, past the gate's wait, so
  OpenClaw never cuts a wait short into its own block),
  ``allowConversationAccess`` (OpenClaw 2026.9 gives a plugin that is not
  bundled ``before_prompt_build`` and ``agent_end`` only with it) and
  ``allowPromptInjection`` (``before_prompt_build``'s ``prependContext``): every
  turn gets what ARS recalls for it and every turn is captured as it ends. A
  ``plugins.allow`` list gets the plugin's id.
* ``mcp.servers.ars``: ``ars mcp --state DIR --supervisor FP``.
* ``--memory-slot`` (opt-in): ARS takes OpenClaw's memory slot
  (``plugins.slots.memory = "ars-memory"``, the plugin in
  tui/agents/openclaw_memory_plugin): ``memory_search`` and ``memory_get`` are
  ARS's, and OpenClaw's own memory-core steps aside. Without it ARS adds to
  OpenClaw's own memory; a slot taken earlier stays (the note says how to give
  it back).

What OpenClaw did before the install is not in ARS yet: the installer says to run
``ars ingest <OpenClaw's state directory>`` once (the same episode ids as the
turns captured from now on, so nothing is stored twice).

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
MEMORY_ID = "ars-memory"
MEMORY_DIR = Path(__file__).resolve().parent / "openclaw_memory_plugin"
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
         ars: list[str] | None = None, memory_slot: bool = False) -> list[FileChange]:
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
        from core.api import gate_policy

        if gate_policy.seen_version(state):  # the policy version in force now: an older one is a rollback
            plugin_config["policyVersion"] = gate_policy.seen_version(state)
    if project is not None:
        root = Path(os.path.abspath(os.path.expanduser(str(project))))
        if not root.is_dir():
            raise InstallError(f"project directory {root} does not exist: pass --project DIR of an existing "
                               "directory (or leave it out: the agent's workspace is the project)")
        plugin_config["project"] = str(root)
    server = {"command": ars[0], "args": ars[1:] + ["mcp", "--state", str(state)] + (["--supervisor", pin] if pin else [])}
    memory_config = {k: plugin_config[k] for k in ("ars", "state", "supervisor") if k in plugin_config}
    return [_merge(config_path(config, home), plugin_config, budget_ms, server, memory_config, memory_slot)]


def _obj(parent: dict, key: str, path: Path, where: str) -> dict:
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    if not isinstance(value, dict):
        raise InstallError(f"{path}: {where} is a {type(value).__name__}, not an object: fix it; nothing was written")
    return value


def _is_our_path(p: object, folder: Path = PLUGIN_DIR) -> bool:
    return isinstance(p, str) and os.path.basename(os.path.normpath(p)) == folder.name \
        and os.path.basename(os.path.dirname(os.path.normpath(p))) == "agents"


def _load_path(paths: list, folder: Path, notes: list[str]) -> None:
    """``folder`` in plugins.load.paths once, replacing an older ARS's copy of it."""
    ours = str(folder)
    for p in [p for p in paths if _is_our_path(p, folder) and p != ours]:
        paths.remove(p)
        notes.append(f"plugins.load.paths: {p} replaced by {ours}")
    if ours not in paths:
        paths.append(ours)


def _allow(plugins: dict, plugin_id: str, path: Path, notes: list[str]) -> None:
    allow = plugins.get("allow")
    if isinstance(allow, list) and plugin_id not in allow:
        allow.append(plugin_id)
        notes.append(f"plugins.allow: {plugin_id} added")
    deny = plugins.get("deny")
    if isinstance(deny, list) and plugin_id in deny:
        notes.append(f"{path}: plugins.deny names {plugin_id}: OpenClaw will not load it until you remove it")


def _memory_slot(plugins: dict, path: Path, config: dict, take: bool, notes: list[str]) -> None:
    """ARS as OpenClaw's memory (``take``), or kept up to date where an earlier run made it so."""
    slots = plugins.get("slots")
    ours = isinstance(slots, dict) and slots.get("memory") == MEMORY_ID
    if not take and not ours:
        return
    slots = _obj(plugins, "slots", path, "plugins.slots")
    load = plugins["load"]["paths"]
    _load_path(load, MEMORY_DIR, notes)
    _allow(plugins, MEMORY_ID, path, notes)
    entries = plugins["entries"]
    entry = _obj(entries, MEMORY_ID, path, f"plugins.entries.{MEMORY_ID}")
    if entry.get("enabled") is not True:
        entry["enabled"] = True
    if entry.get("config") != config:
        entry["config"] = config
    if not ours:
        before = slots.get("memory")
        slots["memory"] = MEMORY_ID
        notes.append(f"plugins.slots.memory: {MEMORY_ID} (was {before or 'memory-core, the default'}): memory_search "
                     "and memory_get are ARS's now")
    elif not take:
        notes.append(f"plugins.slots.memory stays {MEMORY_ID} (an earlier `--memory-slot`); set it back to "
                     "memory-core to give OpenClaw its own memory tools again")


def _merge(path: Path, plugin_config: dict, budget_ms: int, server: dict, memory_config: dict,
           memory_slot: bool) -> FileChange:
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
    _load_path(paths, PLUGIN_DIR, notes)
    _allow(plugins, PLUGIN_ID, path, notes)
    entries = _obj(plugins, "entries", path, "plugins.entries")
    entry = _obj(entries, PLUGIN_ID, path, f"plugins.entries.{PLUGIN_ID}")
    if entry.get("enabled") is not True:
        entry["enabled"] = True
    hooks = _obj(entry, "hooks", path, f"plugins.entries.{PLUGIN_ID}.hooks")
    hooks["allowConversationAccess"] = True  # before_prompt_build and agent_end (not given to a non-bundled plugin)
    hooks["allowPromptInjection"] = True     # prependContext: each turn's recalled memories
    timeouts = _obj(hooks, "timeouts", path, f"plugins.entries.{PLUGIN_ID}.hooks.timeouts")
    timeouts["before_tool_call"] = budget_ms
    old_config = entry.get("config")
    if isinstance(old_config, dict) and isinstance(old_config.get("memory"), dict):
        plugin_config = {**plugin_config, "memory": old_config["memory"]}  # the user's own memory settings stay
    if old_config != plugin_config:
        if old_config is not None:
            notes.append(f"plugins.entries.{PLUGIN_ID}.config brought up to date")
        entry["config"] = plugin_config
    _memory_slot(plugins, path, memory_config, memory_slot, notes)
    mcp = _obj(obj, "mcp", path, '"mcp"')
    servers = _obj(mcp, "servers", path, "mcp.servers")
    merge_server(servers, "ars", server, "MCP server 'ars'", path, notes)
    import json

    new = _dump(obj, indent)
    if text is not None and text.strip() and json.loads(text) == obj:
        new = text  # nothing to change: keep the file byte for byte
    return FileChange(path, text, new, notes, mode)


def catch_up_hint(state: Path) -> str:
    """The one command that brings what OpenClaw did before the install into ARS."""
    home = os.environ.get("OPENCLAW_STATE_DIR") or "~/.openclaw"
    return (f"Once, for what OpenClaw did before today: `ars ingest {home} --state {state}` (the turns from now on are "
            "captured as they end, with the same ids: nothing is stored twice).")


def cli(*, state: Path, project: Path | None, dry_run: bool, write, memory_slot: bool = False) -> int:
    """``ars install openclaw`` as the CLI runs it: lines through ``write``; the exit code."""
    try:
        changes = plan(state=state, project=project, memory_slot=memory_slot)
    except InstallError as exc:
        import sys

        sys.stderr.write(f"error: {' '.join(str(exc).split())}\n")
        return 2
    memory = (f"memory_search/memory_get are ARS's ({MEMORY_ID})" if memory_slot else
              "OpenClaw keeps its own memory tools (`--memory-slot` gives them to ARS)")
    report(changes, pin=pinned_key(state), unpinned="held calls are blocked", dry_run=dry_run, write=write,
           done=f"OpenClaw now asks ARS ({state}) before risky tool calls, and every turn gets what ARS recalls for "
                f"it and is kept as it ends (plugin {PLUGIN_ID}, {PLUGIN_DIR}); {memory}. `ars inbox list` shows what "
                "waits for you; a running Gateway picks the change up on its next reload.\n" + catch_up_hint(state))
    return 0
