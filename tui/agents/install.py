"""``ars install claude-code``: merge ARS's hooks and MCP server into Claude Code's settings.

* Hooks (``PreToolUse``, ``PermissionRequest``, ``PostToolUse`` and ``PostToolUseFailure`` for
  every tool, ``UserPromptSubmit``, ``SessionStart``, ``PreCompact``, ``Stop``, ``SessionEnd``, each
  running ``ars hook claude-code --state DIR --supervisor SHA256:...``) go into
  ``<project>/.claude/settings.json`` (``--project``, the default) or
  ``~/.claude/settings.json`` (``--user``), beside an allow rule for ARS's own MCP tools
  (``permissions.allow``: ``mcp__ars__*``): recalling memory never waits for a prompt
  (Claude Code reads a project's allow rules once its folder is trusted).
* The MCP server (``ars mcp --state DIR``, named ``ars``) goes into
  ``<project>/.mcp.json`` or, for ``--user``, the ``mcpServers`` of
  ``~/.claude.json`` (where ``claude mcp add --scope user`` puts it).

``--supervisor`` pins the supervisor key that is in the state directory when the
installer runs (none before ``ars supervisor init``: then no ARS decision can
let a call go ahead). Claude Code snapshots hook commands at session start, so a
running agent cannot change the pin; run the installer again after a rotation.

Merging never touches another entry: an event's other hooks, other MCP
servers and every other key stay as they are. ARS's own entries are found by
their command (``... hook claude-code``; an ``ars`` server running ``mcp``)
and brought up to date in place, so a second run changes nothing. A file that
changes is backed up first (``settings.json.bak-<timestamp>``) and replaced
atomically. ``--dry-run`` prints the unified diff and writes nothing. A file
that is not the JSON object Claude Code expects stops everything before
anything is written.

Standard library only: json, difflib, shlex, shutil.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
import time
from pathlib import Path

HOOK_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit",
               "SessionStart", "PreCompact", "Stop", "SessionEnd")
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")  # with a matcher
from tui.agents.claude_code import PRE_TOOL_TIMEOUT  # seconds: Claude Code's default, written out in its settings
MCP_NAME = "ars"
ALLOW_OURS = f"mcp__{MCP_NAME}__*"  # every tool of ARS's MCP server (Claude Code's server-level rule)
_OURS = re.compile(r"(?:^|\s)hook\s+claude-code(?:\s|$)")


class InstallError(ValueError):
    """One line: which file, what is wrong, what to do; nothing was written."""


class FileChange:
    __slots__ = ("path", "old_text", "new_text", "notes", "mode")

    def __init__(self, path: Path, old_text: str | None, new_text: str, notes: list[str], mode: int | None):
        self.path = path
        self.old_text = old_text
        self.new_text = new_text
        self.notes = notes
        self.mode = mode

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        old = [] if self.old_text is None else self.old_text.splitlines(keepends=True)
        lines = difflib.unified_diff(old, self.new_text.splitlines(keepends=True),
                                     fromfile="/dev/null" if self.old_text is None else str(self.path),
                                     tofile=str(self.path))
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def ars_command() -> list[str]:
    """The ``ars`` to write into the settings: an absolute path, since Claude
    Code's PATH may not hold this venv."""
    script = os.path.join(os.path.dirname(sys.executable or ""), "ars")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [os.path.abspath(script)]
    found = shutil.which("ars")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable or "python3"), "-m", "tui.cli.main"]


def plan(*, state: Path, project: Path | None = None, user: bool = False, home: Path | None = None,
         ars: list[str] | None = None) -> list[FileChange]:
    """What installing would change (nothing is written): the settings file and the MCP file."""
    state = Path(os.path.abspath(os.path.expanduser(str(state))))
    ars = list(ars or ars_command())
    pin = pinned_key(state)
    hook_cmd = shlex.join(ars + ["hook", "claude-code", "--state", str(state)] + pin_args(state, pin))
    server = {"type": "stdio", "command": ars[0], "env": {},
              "args": ars[1:] + ["mcp", "--state", str(state)] + (["--supervisor", pin] if pin else [])}
    if user:
        home = Path(home or Path.home())
        settings_path, mcp_path = home / ".claude" / "settings.json", home / ".claude.json"
    else:
        root = Path(os.path.abspath(os.path.expanduser(str(project or "."))))
        if not root.is_dir():
            raise InstallError(f"project directory {root} does not exist: pass --project DIR of an existing "
                               "project (or --user)")
        settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    return [_merge_hooks(settings_path, hook_cmd), _merge_mcp(mcp_path, server)]


def pin_args(state: Path, pin: str | None) -> list[str]:
    """What a hook command pins: the supervisor key and the gate policy version in force now
    (an older policy put back later is a rollback the hook refuses; Claude Code snapshots the
    command at session start, where the agent cannot change it). Run `ars install` again
    after `ars gate edit` to raise the pinned version."""
    if not pin:
        return []
    from core.api import gate_policy

    version = gate_policy.seen_version(state)
    return ["--supervisor", pin] + (["--policy-version", str(version)] if version else [])


def pinned_key(state: Path) -> str | None:
    """The supervisor key the hook will pin: the state directory's, read now, while
    the supervisor runs the installer (`ars supervisor show` prints it to compare)."""
    from core.api import public_fingerprint

    return public_fingerprint(state)


def merge_server(servers: dict, name: str, server: dict, where: str, path: Path, notes: list[str],
                 new_entry=None) -> None:
    """ARS's MCP server ``name`` in ``servers``: added (``new_entry()`` builds it, default a copy
    of ``server``), brought up to date when it runs ``ars mcp``, left alone (with a note) when
    another server holds the name."""
    have = servers.get(name)
    if have is None:
        servers[name] = new_entry() if new_entry is not None else dict(server)
    elif _is_ars_server(have):
        for key in ("command", "args"):
            if have.get(key) != server[key]:
                have[key] = server[key] if key == "command" else list(server[key])
                notes.append(f"{where}: {key} brought up to date")
    else:
        notes.append(f"{path}: an MCP server named {name!r} exists and does not run `ars mcp`: left as it is; "
                     f"add ARS by hand under another name ({shlex.join([server['command'], *server['args']])})")


def report(changes: list[FileChange], *, pin: str | None, unpinned: str, done: str, dry_run: bool,
           write=None) -> None:
    """What an installer says: each file's diff (``dry_run``: nothing written) or what was
    written with its notes, the pinned supervisor key (``unpinned``: what happens without
    one), and ``done``."""
    write = write or sys.stdout.write
    pin_line = (f"pinned supervisor key {pin} (compare with `ars supervisor show` on your terminal)" if pin else
                f"no supervisor key yet: no ARS decision can let a held call go ahead ({unpinned}); run "
                "`ars supervisor init`, then this command again")
    if dry_run:
        for ch in changes:
            write(ch.diff() if ch.changed else f"# {ch.path}: unchanged\n")
            for note in ch.notes:
                write(f"# {note}\n")
        write(f"# {pin_line}\n# dry run: nothing was written\n")
        return
    for line in apply(changes):
        write(line + "\n")
    for ch in changes:
        for note in ch.notes:
            write(f"  {note}\n")
    write(pin_line + "\n")
    write(done + "\n")


def apply(changes: list[FileChange]) -> list[str]:
    """Write what changed (a backup of each existing file first); one line per file."""
    from core.api import atomic_write

    report = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for ch in changes:
        if not ch.changed:
            report.append(f"unchanged {ch.path}")
            continue
        backup = None
        if ch.old_text is not None:
            backup = ch.path.with_name(f"{ch.path.name}.bak-{stamp}")
            n = 1
            while backup.exists():
                backup = ch.path.with_name(f"{ch.path.name}.bak-{stamp}-{n}")
                n += 1
            shutil.copy2(ch.path, backup)
        ch.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(ch.path, ch.new_text)  # 0600; an existing file keeps its mode
        if ch.mode is not None:
            os.chmod(ch.path, ch.mode)
        report.append(f"updated {ch.path} (backup {backup.name})" if backup else f"created {ch.path}")
    return report


# -- merging ------------------------------------------------------------------------
def _read(path: Path) -> tuple[dict, str | None, int | None, str]:
    """(object, text or None when missing, mode, indent)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None, None, "  "
    except IsADirectoryError:
        raise InstallError(f"{path} is a directory, not a settings file: move it aside; nothing was written") from None
    except OSError as exc:
        raise InstallError(f"{path} cannot be read ({exc.strerror or exc}); nothing was written") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"{path} is not UTF-8 text: fix it or move it aside; nothing was written") from None
    if not text.strip():
        obj: object = {}
    else:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InstallError(f"{path} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}): "
                               "fix it or move it aside; nothing was written") from None
        except RecursionError:
            raise InstallError(f"{path} is nested too deeply to read: fix it or move it aside; "
                               "nothing was written") from None
    if not isinstance(obj, dict):
        raise InstallError(f"{path} holds a JSON {type(obj).__name__}, not an object: fix it or move it aside; "
                           "nothing was written")
    m = re.search(r"^([ \t]+)\S", text, re.M)
    return obj, text, path.stat().st_mode & 0o7777, (m.group(1) if m else "  ")


def _dump(obj: dict, indent: str) -> str:
    return json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and bool(_OURS.search(hook["command"]))


def _merge_hooks(path: Path, hook_cmd: str) -> FileChange:
    obj, text, mode, indent = _read(path)
    notes: list[str] = []
    hooks = obj.get("hooks")
    if hooks is None:
        hooks = obj["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: \"hooks\" is a {type(hooks).__name__}, not an object of events: fix it; "
                           "nothing was written")
    for event in HOOK_EVENTS:
        groups = hooks.get(event)
        if groups is None:
            groups = hooks[event] = []
        if not isinstance(groups, list):
            raise InstallError(f"{path}: hooks.{event} is a {type(groups).__name__}, not a list of matcher "
                               "groups: fix it; nothing was written")
        ours = [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                for h in g["hooks"] if _is_ours(h)]
        for h in ours:
            if h["command"] != hook_cmd:
                notes.append(f"{event}: ARS's hook now runs {hook_cmd}")
                h["command"] = hook_cmd
        if ours:
            continue
        entry: dict = {"type": "command", "command": hook_cmd}
        if event in ("PreToolUse", "PermissionRequest"):  # both may wait for a person
            entry["timeout"] = PRE_TOOL_TIMEOUT
        groups.append({"matcher": "*", "hooks": [entry]} if event in TOOL_EVENTS else {"hooks": [entry]})
    _allow_ours(obj, path, notes)
    new = _dump(obj, indent)
    if text is not None and text.strip() and json.loads(text) == obj:
        new = text  # nothing to change: keep the file byte for byte
    return FileChange(path, text, new, notes, mode)


def _allow_ours(obj: dict, path: Path, notes: list[str]) -> None:
    """``permissions.allow`` holds ``mcp__ars__*`` (added once; the other rules stay as they are)."""
    perms = obj.get("permissions")
    if perms is None:
        perms = obj["permissions"] = {}
    if not isinstance(perms, dict):
        raise InstallError(f"{path}: \"permissions\" is a {type(perms).__name__}, not an object: fix it; "
                           "nothing was written")
    allow = perms.get("allow")
    if allow is None:
        allow = perms["allow"] = []
    if not isinstance(allow, list):
        raise InstallError(f"{path}: permissions.allow is a {type(allow).__name__}, not a list of rules: fix it; "
                           "nothing was written")
    if ALLOW_OURS not in allow:
        allow.append(ALLOW_OURS)
        notes.append(f"permissions.allow: {ALLOW_OURS} (ARS's memory tools run without a prompt)")


def _merge_mcp(path: Path, server: dict) -> FileChange:
    obj, text, mode, indent = _read(path)
    notes: list[str] = []
    servers = obj.get("mcpServers")
    if servers is None:
        servers = obj["mcpServers"] = {}
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: \"mcpServers\" is a {type(servers).__name__}, not an object: fix it; "
                           "nothing was written")
    merge_server(servers, MCP_NAME, server, f"MCP server {MCP_NAME!r}", path, notes)
    new = _dump(obj, indent)
    if text is not None and text.strip() and json.loads(text) == obj:
        new = text
    return FileChange(path, text, new, notes, mode)


def _is_ars_server(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    words = [entry["command"], *(a for a in args if isinstance(a, str))] if isinstance(args, list) else [entry["command"]]
    return "mcp" in words and any(os.path.basename(w) == "ars" or w == "tui.cli.main" for w in words)
