"""The gate: a policy (``Gate.parse``/``Gate.load``) and its verdict on one tool
call (``Gate.check``: every reason to hold it, highest risk first)."""

from __future__ import annotations

import os

from core.inbox.gate.check import Check
from core.inbox.gate.defaults import (ALLOW_KEYS, DEFAULT_DEADLINE, DEFAULT_DOC, DEFAULT_MCP, DEFAULT_TIMEOUT,
                                      DEFAULT_TOML, GATE_FILE, HARMLESS_TOOLS, MAIN_FIELD, MAX_SUBJECT, MAX_TIMEOUT,
                                      READ_TOOLS, RISKS, TOP_KEYS, WRITE_TOOLS)
from core.inbox.gate.places import CLOCK, OutOfTime, ToolWord
from core.inbox.gate.rules import GateError, Match, Rule, excerpt_of, mcp_allowed, name_list, parse_rule, subject_of
from core.inbox.gate.sensitive import CONTROL_CHARS


class Gate:
    def __init__(self, rules: list[Rule] | None = None, timeout: float = DEFAULT_TIMEOUT, path: str = "",
                 commands: frozenset[str] = frozenset(), mcp: tuple[str, ...] = (), tools: frozenset[str] = frozenset(),
                 write_roots: tuple[str, ...] = (), notify: tuple[str, str] | None = None):
        self.notify = notify  # (url, format) of [notify]: core/inbox/notify.py posts each new request there
        self.rules = list(rules or [])
        self.timeout = timeout
        self.path = path
        self.commands = frozenset(commands)
        self.mcp = tuple(DEFAULT_MCP) + tuple(mcp)
        self.tools = frozenset(tools)
        self.write_roots = tuple(write_roots)

    # -- loading -----------------------------------------------------------------
    @classmethod
    def builtin(cls) -> "Gate":
        """The built-in defaults: no extra allowances, no extra holds."""
        return cls([], DEFAULT_TIMEOUT, "(built-in)")

    @classmethod
    def load(cls, state_dir: str | os.PathLike, *, create: bool = True) -> "Gate":
        """The gate of a state directory; gate.toml is written with the
        defaults (0600) if it does not exist yet and ``create`` is true."""
        path = os.path.join(os.fspath(state_dir), GATE_FILE)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            if create:
                write_defaults(state_dir)
            return cls.parse(DEFAULT_TOML, path)
        except IsADirectoryError:
            raise GateError(f"{path}: is a directory, not a file: move it aside "
                            "(the defaults are written again on next use)") from None
        except OSError as exc:
            raise GateError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GateError(f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: str = GATE_FILE) -> "Gate":
        if text == DEFAULT_TOML:
            doc = DEFAULT_DOC
        else:
            import tomllib

            try:
                doc = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise GateError(f"{path}: not valid TOML ({' '.join(str(exc).split())}): fix that line") from None
        unknown = sorted(set(doc) - TOP_KEYS)
        if unknown:
            raise GateError(f"{path}: unknown key {unknown[0]!r}: the file holds `timeout`, [allow], [notify] and "
                            "[[rule]] tables")
        timeout = doc.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
            raise GateError(f"{path}: timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, "
                            f"not {timeout!r}")
        allow = doc.get("allow", {})
        if not isinstance(allow, dict):
            raise GateError(f"{path}: `allow` must be a table: write it as [allow] with key = [...] lines")
        bad = sorted(set(allow) - ALLOW_KEYS)
        if bad:
            raise GateError(f"{path}: [allow] has an unknown key {bad[0]!r} (keys: {', '.join(sorted(ALLOW_KEYS))})")
        commands = name_list(allow.get("commands", []), path, "commands")
        tools = name_list(allow.get("tools", []), path, "tools")
        mcp = name_list(allow.get("mcp", []), path, "mcp")
        for m in mcp:
            if not m.startswith("mcp__") or "*" in m[:-1]:
                raise GateError(f"{path}: [allow] mcp entry {m!r}: write mcp__<server>__<tool>, with '*' only at the "
                                "end (mcp__github__get_*)")
        roots = []
        for r in name_list(allow.get("write_roots", []), path, "write_roots"):
            full = os.path.expanduser(r)
            if not os.path.isabs(full):
                raise GateError(f"{path}: [allow] write_roots entry {r!r} is not an absolute directory")
            roots.append(os.path.normpath(full))
        raw_rules = doc.get("rule", [])
        if not isinstance(raw_rules, list):
            raise GateError(f"{path}: `rule` must be an array of tables: write each rule as [[rule]]")
        rules = []
        for i, r in enumerate(raw_rules, 1):
            rule, allow_under = parse_rule(r, i, path)
            if rule is not None:
                rules.append(rule)
            roots.extend(allow_under)
        from core.inbox.notify_url import parse_target

        return cls(rules, float(timeout), path, frozenset(commands), tuple(mcp), frozenset(tools), tuple(roots),
                   notify=parse_target(doc.get("notify"), path, GateError))

    # -- checking ----------------------------------------------------------------
    def check(self, tool_name: str, tool_input: dict, *, project_dir: str | None = None, state_dir=None,
              home: str | None = None, cwd: str | None = None, deadline_s: float = DEFAULT_DEADLINE) -> list[Match]:
        """Every reason to hold this call, highest risk first; empty: it passes.

        ``project_dir``: the project root (None: no project, so every write is
        held); ``state_dir``: ARS's state directory (always held);
        ``home``: what ``~`` means (default: this user's); ``cwd``: the
        event's working directory, used only to resolve relative paths when it
        lies inside the project."""
        deadline = CLOCK() + deadline_s  # CPU seconds, not wall time (core/inbox/cpu_clock.py)
        ctx = Check(self, project_dir, state_dir, home, cwd, deadline)
        try:
            self._check(ctx, tool_name, tool_input if isinstance(tool_input, dict) else {})
        except OutOfTime:
            ctx.matches.append(Match("out-of-time", "medium",
                                     f"the gate ran out of time ({deadline_s:g} s of CPU) checking this call"))
        order = {r: i for i, r in enumerate(reversed(RISKS))}
        seen: set[tuple[str, str, str]] = set()
        found = []
        for m in ctx.matches:
            key = (m.rule, m.reason, m.excerpt)
            if key not in seen:
                seen.add(key)
                found.append(m)
        found.sort(key=lambda m: order.get(m.risk, len(RISKS)))
        return found

    def _check(self, ctx: Check, tool_name: str, tool_input: dict) -> None:
        main = tool_input.get(MAIN_FIELD.get(tool_name, "file_path")) or tool_input.get("path") or tool_name
        ctx.excerpt = main[:200] if isinstance(main, str) else tool_name[:200]
        too_long = False
        for rule in self.rules:
            if not rule.applies_to(tool_name):
                continue
            subject = subject_of(tool_name, tool_input, rule.field)
            if len(subject) > MAX_SUBJECT:
                too_long = True
                continue
            m = rule.regex.search(subject)
            if m is not None:
                ctx.matches.append(Match(rule.name, rule.risk, rule.reason, excerpt_of(subject, m.start(), m.end())))
        if too_long:
            ctx.matches.append(Match("too-long", "high", f"the tool input is longer than {MAX_SUBJECT} characters, "
                                                         "too long for the gate to check"))
            return
        if tool_name == "Bash":
            command = tool_input.get("command")
            if not isinstance(command, str):
                ctx.hold("no-command", "medium", "a Bash call without a command string", None)
                return
            if len(command) > MAX_SUBJECT:
                ctx.hold("too-long", "high", f"the command is longer than {MAX_SUBJECT} characters, too long for "
                                             "the gate to check", None, command[:200])
                return
            if not command.strip():
                return
            odd = next((c for c in command if c in CONTROL_CHARS), None)
            if odd is not None:  # bash reads \r, \v, \f as word characters, the parser as blanks: they disagree
                ctx.hold("control-character", "medium", f"the command holds a control character ({odd!r}) that "
                                                        "the shell and the parser read differently", None,
                         command[:200])
                return
            ctx.bash(command)
        elif tool_name in WRITE_TOOLS:
            field = "notebook_path" if tool_name == "NotebookEdit" else "file_path"
            target = tool_input.get(field)
            if not isinstance(target, str) or not target or "\0" in target:
                ctx.hold("write-outside-project", "medium", f"{tool_name} without a readable {field}", None)
                return
            ctx.write(ToolWord(target), None, tool=tool_name)
        elif tool_name in READ_TOOLS:
            ctx.read_tool(tool_name, tool_input)
        elif tool_name == "WebFetch":
            url = tool_input.get("url")
            if not isinstance(url, str) or not url:
                ctx.hold("private-address", "medium", "WebFetch without a URL", None)
                return
            ctx.url(ToolWord(url), None)
        elif tool_name.startswith("mcp__"):
            if not mcp_allowed(tool_name, self.mcp):
                ctx.hold("mcp-tool", "medium", f"MCP tool {tool_name} is not on the gate's allow-list", None,
                         tool_name)
        elif tool_name in HARMLESS_TOOLS or tool_name in self.tools:
            return
        else:
            ctx.hold("unknown-tool", "medium", f"{tool_name[:80]} is not a tool the gate knows", None, tool_name[:80])


def write_defaults(state_dir: str | os.PathLike) -> str:
    """Write the default gate.toml (0600, atomically); returns its path."""
    from core.infra.fsutil import atomic_write, private_dir  # stdlib-only module

    private_dir(state_dir)
    path = os.path.join(os.fspath(state_dir), GATE_FILE)
    atomic_write(path, DEFAULT_TOML)
    return path
