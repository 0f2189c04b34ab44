"""``ars install hermes``: ARS's shell hooks and MCP server in Hermes Agent's config.yaml.

Into ``<hermes home>/config.yaml`` (``--hermes-home``, else ``$HERMES_HOME``,
else ``~/.hermes``):

* ``hooks:`` ``pre_tool_call`` (timeout ``PRE_TOOL_TIMEOUT``, Hermes' maximum;
  the hook is told it with ``--timeout`` and answers before it, since Hermes
  runs a call whose hook timed out), ``post_tool_call`` and ``on_session_end``,
  each running ``ars hook hermes --state DIR --supervisor SHA256:...``;
* ``mcp_servers: ars:`` running ``ars mcp --state DIR --supervisor ...``;
* ARS's memory provider in ``<hermes home>/plugins/ars/`` and ``memory.provider: ars``
  (tui/agents/install_hermes_memory.py); and it says when the Hermes on PATH has no
  MCP support (no ``mcp`` package in its Python).

Hermes asks once, at a terminal, before it runs a new hook command (or
registers it silently with ``--accept-hooks``/``HERMES_ACCEPT_HOOKS``); a hook
nobody accepted is skipped, which would leave the gate off. Running this
installer is that consent, so it also records the three commands in Hermes'
``shell-hooks-allowlist.json`` (ARS's old entries are replaced).

Same rules as ``ars install claude-code`` (tui/agents/install.py, whose
FileChange/apply this uses): other keys, other hooks and the YAML's comments
stay (ruamel.yaml round trip); ARS's own entries are found by their command
and brought up to date in place, so a second run changes nothing; a changed
file is backed up first; ``--dry-run`` prints the diff; a config that is not a
YAML mapping stops everything before anything is written.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

from tui.agents import install_hermes_memory as memory
from tui.agents.install import pin_args, FileChange, InstallError, ars_command, merge_server, pinned_key, report

PRE_TOOL_TIMEOUT = 300   # s: Hermes' MAX_TIMEOUT_SECONDS for a shell hook
OTHER_TIMEOUT = 30       # s: post_tool_call and on_session_end do one stat, or start a detached ingest
HOOK_EVENTS = {"pre_tool_call": PRE_TOOL_TIMEOUT, "post_tool_call": OTHER_TIMEOUT, "on_session_end": OTHER_TIMEOUT}
MCP_NAME = "ars"
MCP_TIMEOUT = 300        # s: a tool call of the ars MCP server (written once; a value the user set is kept)
ALLOWLIST = "shell-hooks-allowlist.json"
_OURS = re.compile(r"(?:^|\s)hook\s+hermes(?:\s|$)")


def hermes_home(explicit: Path | None = None) -> Path:
    raw = str(explicit) if explicit is not None else (os.environ.get("HERMES_HOME") or "~/.hermes")
    return Path(os.path.abspath(os.path.expanduser(raw)))


def commands(state: Path, ars: list[str] | None = None) -> dict[str, str]:
    """Each hooked event's command (the pin read now from the state directory)."""
    ars = list(ars or ars_command())
    pin = pinned_key(state)
    base = ars + ["hook", "hermes", "--state", str(state)] + pin_args(state, pin)
    return {event: shlex.join(base + (["--timeout", str(PRE_TOOL_TIMEOUT)] if event == "pre_tool_call" else []))
            for event in HOOK_EVENTS}


def plan(*, state: Path, home: Path | None = None, ars: list[str] | None = None) -> list[FileChange]:
    """What installing would change (nothing is written): config.yaml and the hook allowlist."""
    state = Path(os.path.abspath(os.path.expanduser(str(state))))
    home = hermes_home(home)
    ars = list(ars or ars_command())
    cmds = commands(state, ars)
    pin = pinned_key(state)
    server = {"command": ars[0], "args": ars[1:] + ["mcp", "--state", str(state)] + (["--supervisor", pin] if pin else [])}
    return [_merge_config(home / "config.yaml", cmds, server), _merge_allowlist(home / ALLOWLIST, cmds),
            *memory.plugin_changes(home, state, ars)]


def _yaml():
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # long hook commands stay on one line
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _read_text(path: Path) -> tuple[str | None, int | None]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except IsADirectoryError:
        raise InstallError(f"{path} is a directory, not Hermes' config: move it aside; nothing was written") from None
    except OSError as exc:
        raise InstallError(f"{path} cannot be read ({exc.strerror or exc}); nothing was written") from None
    try:
        return raw.decode("utf-8"), path.stat().st_mode & 0o7777
    except UnicodeDecodeError:
        raise InstallError(f"{path} is not UTF-8 text: fix it or move it aside; nothing was written") from None


def _merge_config(path: Path, cmds: dict[str, str], server: dict) -> FileChange:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    text, mode = _read_text(path)
    y = _yaml()
    try:
        doc = y.load(text) if text and text.strip() else None
    except YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1} column {where.column + 1})" if where is not None else ""
        raise InstallError(f"{path} is not valid YAML{at}: {' '.join(str(getattr(exc, 'problem', exc)).split())}; "
                           "fix it or move it aside; nothing was written") from None
    if doc is None:
        doc = CommentedMap()
    if not isinstance(doc, dict):
        raise InstallError(f"{path} holds a YAML {type(doc).__name__}, not a mapping of settings: fix it or move it "
                           "aside; nothing was written")
    before = json.dumps(doc, default=str, sort_keys=True)
    notes: list[str] = []
    hooks = doc.get("hooks")
    if hooks is None:
        hooks = doc["hooks"] = CommentedMap()
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: hooks is a {type(hooks).__name__}, not a mapping of events: fix it; "
                           "nothing was written")
    for event, timeout in HOOK_EVENTS.items():
        entries = hooks.get(event)
        if entries is None:
            entries = hooks[event] = []
        if not isinstance(entries, list):
            raise InstallError(f"{path}: hooks.{event} is a {type(entries).__name__}, not a list of hooks: fix it; "
                               "nothing was written")
        ours = [e for e in entries if isinstance(e, dict) and isinstance(e.get("command"), str)
                and _OURS.search(e["command"])]
        for e in ours:
            if e["command"] != cmds[event] or e.get("timeout") != timeout:
                notes.append(f"hooks.{event}: ARS's hook now runs {cmds[event]} (timeout {timeout} s)")
                e["command"] = cmds[event]
                e["timeout"] = timeout
            if "matcher" in e:  # every tool: a matcher would leave the others ungated
                del e["matcher"]
                notes.append(f"hooks.{event}: ARS's hook matches every tool again")
        if not ours:
            entry = CommentedMap()
            entry["command"] = cmds[event]
            entry["timeout"] = timeout
            entries.append(entry)
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = doc["mcp_servers"] = CommentedMap()
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: mcp_servers is a {type(servers).__name__}, not a mapping: fix it; "
                           "nothing was written")
    def entry() -> CommentedMap:
        made = CommentedMap()
        made["command"] = server["command"]
        made["args"] = list(server["args"])
        made["timeout"] = MCP_TIMEOUT  # request_approval waits for a person: Hermes' default is 120 s
        return made

    merge_server(servers, MCP_NAME, server, f"mcp_servers.{MCP_NAME}", path, notes, new_entry=entry)
    memory.memory_setting(doc, path, notes)
    if text is not None and text.strip() and json.dumps(doc, default=str, sort_keys=True) == before:
        return FileChange(path, text, text, notes, mode)  # nothing to change: byte for byte
    out = io.StringIO()
    y.dump(doc, out)
    return FileChange(path, text, out.getvalue(), notes, mode)


def _merge_allowlist(path: Path, cmds: dict[str, str]) -> FileChange:
    """Hermes' consent file (agent/shell_hooks.py): {"approvals": [{event, command, approved_at, ...}]}."""
    text, mode = _read_text(path)
    try:
        data = json.loads(text) if text and text.strip() else {}
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}): fix it or move it aside; nothing was written") from None
    if not isinstance(data, dict) or not isinstance(data.get("approvals", []), list):
        raise InstallError(f"{path} is not Hermes' hook allowlist ({{\"approvals\": [...]}}): fix it or move it "
                           "aside; nothing was written")
    approvals = list(data.get("approvals", []))
    wanted = set(cmds.items())
    have = {(e.get("event"), e.get("command")) for e in approvals if isinstance(e, dict)}
    stale = [e for e in approvals if isinstance(e, dict) and isinstance(e.get("command"), str)
             and _OURS.search(e["command"]) and (e.get("event"), e.get("command")) not in wanted]
    if not stale and wanted <= have:
        return FileChange(path, text, text, [], mode) if text is not None else \
            FileChange(path, None, json.dumps(data, indent=2, sort_keys=True) + "\n", [], None)
    now = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    approvals = [e for e in approvals if not any(e is s for s in stale)]
    for event, command in cmds.items():
        if (event, command) not in have:
            approvals.append({"event": event, "command": command, "approved_at": now,
                              "script_mtime_at_approval": None})
    data["approvals"] = approvals
    notes = [f"{path}: ARS's hook commands recorded as accepted (running this installer is the consent Hermes "
             "asks for)"]
    return FileChange(path, text, json.dumps(data, indent=2, sort_keys=True) + "\n", notes, mode)


def install_cli(*, home: Path | None, state: Path, dry_run: bool) -> int:
    """``ars install hermes``: print what changed (or the diff with ``dry_run``); the exit code."""
    try:
        changes = plan(state=state, home=home)
    except InstallError as exc:
        sys.stderr.write(f"error: {' '.join(str(exc).split())}\n")
        return 2
    report(changes, pin=pinned_key(state), unpinned="Hermes' held calls are blocked", dry_run=dry_run,
           done=f"Hermes now asks ARS ({state}) before risky tool calls and hears its memory in every turn (from "
                "its next start): `ars inbox list` shows what waits for you.")
    problem = memory.mcp_problem()
    if problem:
        sys.stdout.write(("# " if dry_run else "") + f"note: {problem}\n")
    return 0
