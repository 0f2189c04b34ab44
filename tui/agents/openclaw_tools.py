"""OpenClaw's tools in the gate's words (core/inbox/gate/ checks Bash, Write,
Edit, Read, WebFetch, mcp__... and knows Claude Code's harmless tools).

``translate(tool, params, cwd)`` returns the calls the gate checks for one
OpenClaw tool call, plus reasons to hold it that the gate cannot see:

* ``exec`` / ``bash``: ``Bash`` with its ``command``; ``workdir`` is where
  relative paths resolve. A call that sets ``env`` (it can change what runs:
  ``PATH``, ``LD_PRELOAD``), asks for ``elevated`` mode or runs the command on a
  paired node (``host: "node"``) is held whatever the command.
* ``write`` / ``edit`` / ``read``: ``Write`` / ``Edit`` / ``Read`` of ``path``.
* ``apply_patch``: one ``Write`` per file the patch adds, updates, moves to or
  deletes (its ``*** ... File:`` lines, parsed here; the host's
  ``derivedPaths`` hint is added, never trusted alone); a patch naming no file
  is held.
* ``web_fetch``: ``WebFetch`` of ``url``.
* ``process``: listing, polling and reading a background exec session pass;
  writing to it, sending keys or killing it is held (it drives a shell).
* Read-only tools (``web_search``, ``memory_search``, ``session_status``...)
  pass; ARS's own MCP tools (``ars__recall``...) as ``mcp__ars__recall``;
* Tool Search (on by default in OpenClaw 2026.9): ``tool_search`` and
  ``tool_describe`` only read the catalog and pass; ``tool_call`` is checked as
  the call it makes (its ``id``: a catalog id ``mcp:ars:ars__recall`` or a
  name, and ``args``), so ARS's own tools pass through it and ``exec`` through
  it is the same ``exec``;
  every other tool goes to the gate under its own name, which holds tools it
  does not know unless gate.toml's ``[allow] tools`` names them.

Standard library only: it runs on every tool call.
"""

from __future__ import annotations

import os
import re

# OpenClaw tools that only read (the session's own state, search results, memory)
HARMLESS = frozenset({"web_search", "memory_search", "memory_get", "session_status", "sessions_list",
                      "sessions_history", "agents_list", "update_plan", "ask_user"})
PROCESS_READS = frozenset({"list", "poll", "log", "status"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
MCP_SEPARATORS = ("__", "_")  # OpenClaw names a server's tool <server>__<tool> (older: <server>_<tool>)
# ARS's own MCP tools that only read its memory or the inbox (tui/agents/mcp_server.py); its
# others (remember, request_approval, request_forget) go to the gate as mcp__ars__<name>
ARS_READS = frozenset({"recall", "explain", "get", "loops", "check_approval", "startup_context"})
CATALOG_READS = frozenset({"tool_search", "tool_describe"})  # Tool Search's catalog, read only
CATALOG_CALL = "tool_call"


class Held:
    """A reason to hold that is not the gate's (same fields as gate.Match)."""

    __slots__ = ("rule", "risk", "reason", "excerpt")

    def __init__(self, rule: str, risk: str, reason: str, excerpt: str = ""):
        self.rule, self.risk, self.reason, self.excerpt = rule, risk, reason, excerpt


def _text(params: dict, *keys: str) -> str | None:
    for k in keys:
        v = params.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def _path(p: str) -> str:
    """A path as OpenClaw's file tools resolve it: ``~`` is the user's home."""
    return os.path.expanduser(p) if p.startswith("~") else p


def translate(tool: str, params: dict, cwd: str | None,
              derived: list | None = None) -> tuple[list[tuple[str, dict, str | None]], list[Held]]:
    """([(gate tool name, gate input, cwd)], [extra holds]) for one OpenClaw call."""
    name = tool.strip()
    low = name.lower()
    if low in ("exec", "bash"):
        command = params.get("command")
        workdir = _text(params, "workdir", "cwd")
        workdir = _path(workdir) if workdir else cwd
        if workdir and cwd and not os.path.isabs(workdir):
            workdir = os.path.normpath(os.path.join(cwd, workdir))
        extra = []
        env = params.get("env")
        if isinstance(env, dict) and env:
            keys = ", ".join(sorted(str(k) for k in env)[:6])
            extra.append(Held("exec-env", "medium", f"the command runs with environment overrides ({keys}) that can "
                                                    "change what runs", keys))
        if params.get("elevated") is True:
            extra.append(Held("exec-elevated", "high", "the command asks for elevated mode (outside the sandbox)"))
        if params.get("host") == "node":
            extra.append(Held("exec-node", "medium", "the command runs on a paired node, not on this machine"))
        return [("Bash", {"command": command if isinstance(command, str) else None}, workdir)], extra
    if low in ("write", "edit", "read"):
        path = _text(params, "path", "file_path", "filePath")
        gate_name = {"write": "Write", "edit": "Edit", "read": "Read"}[low]
        return [(gate_name, {"file_path": _path(path) if path else ""}, cwd)], []
    if low == "apply_patch":
        patch = _text(params, "input", "patch") or ""
        paths = [_path(a or b) for a, b in _PATCH_FILE.findall(patch)]
        paths += [p for p in (derived or []) if isinstance(p, str) and p and p not in paths]
        if not paths:
            return [], [Held("patch-unreadable", "medium", "apply_patch without a file the gate can read in it")]
        return [("Write", {"file_path": p}, cwd) for p in paths[:200]], []
    if low == "web_fetch":
        return [("WebFetch", {"url": _text(params, "url") or ""}, cwd)], []
    if low == "process":
        action = params.get("action")
        if isinstance(action, str) and action in PROCESS_READS:
            return [], []
        return [], [Held("process-input", "medium", f"process {str(action)[:40]!r} drives a running command "
                                                    "(writes to it, sends keys or kills it)", str(action)[:40])]
    if low in HARMLESS or low in CATALOG_READS:
        return [], []
    if low == CATALOG_CALL:
        target, args = catalog_target(params)
        if not target or target.lower() in (CATALOG_CALL, "tool_search_code"):
            return [], [Held("tool-call-target", "medium", "tool_call names no tool the gate can check",
                             str(params.get("id"))[:80])]
        return translate(target, args, cwd, derived)
    if low.startswith("ars_"):
        for sep in MCP_SEPARATORS:
            if low.startswith("ars" + sep) and len(low) > 3 + len(sep):
                if low[3 + len(sep):] in ARS_READS:
                    return [], []  # ARS's own memory, read: never held by ARS's own gate
                return [("mcp__ars__" + name[3 + len(sep):], params, cwd)], []
    return [(name, params, cwd)], []


def catalog_target(params: dict) -> tuple[str, dict]:
    """(tool name, its input) of a ``tool_call``: ``id`` is a catalog id (``source:owner:name``)
    or a name; the input is ``args``, or (a local model's flattened call) the other fields."""
    ident = params.get("id") if isinstance(params.get("id"), str) else params.get("name")
    if not isinstance(ident, str) or not ident.strip():
        return "", {}
    name = ident.strip().split(":")[-1] if ident.count(":") >= 2 else ident.strip()
    args = params.get("args")
    if not isinstance(args, dict):
        args = {k: v for k, v in params.items() if k not in ("id", "name", "args")}
    return name, args


def check(gate, tool: str, params: dict, *, project: str | None, state: str, cwd: str | None,
          derived: list | None = None) -> tuple[list, str, dict]:
    """(every reason to hold, the gate tool name and input the request is bound to).
    A call that becomes several gate calls (apply_patch) is bound to the whole
    OpenClaw input under the OpenClaw tool's name."""
    calls, extra = translate(tool, params if isinstance(params, dict) else {}, cwd, derived)
    matches = list(extra)
    for gate_name, gate_input, where in calls:
        matches += gate.check(gate_name, gate_input, project_dir=project, state_dir=state, cwd=where)
    if len(calls) == 1 and not extra and calls[0][0] == "Bash":
        return matches, "Bash", {"command": calls[0][1]["command"]}
    if len(calls) == 1 and not extra and calls[0][0] in ("Write", "Edit", "Read", "WebFetch"):
        return matches, calls[0][0], params
    return matches, tool, params
