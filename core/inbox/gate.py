"""The Claude Code gate: which tool calls pass at once and which wait for a person.

An allow-list over a real parse. A call passes only when everything it does
is known to be harmless; everything else is held (an inbox request, then
Claude Code's own prompt), never refused outright and never passed on a guess.

* **Bash**: the command is parsed with tree-sitter-bash (``core/inbox/shell.py``)
  into every simple command that can run -- through pipelines, lists,
  ``$(...)``, backticks, ``<(...)``, subshells, ``{ }``, if/for/while/case and
  function bodies -- with quotes removed (``\\rm``, ``r''m``, ``"rm"`` are all
  ``rm``). Each must be on the allow-list with arguments it allows
  (``core/inbox/commands.py``): read-only and everyday development commands;
  writes (``cp``, ``mv``, ``rm`` never recursive, ``sed -i``, ``tee``,
  redirections...) only inside the project or ``/dev/null``; git without
  force-pushes, ``reset --hard``, ``clean -f``, discarding checkouts, config
  writes...; interpreters running a script file, never ``-c``/``-e`` or a
  program on standard input (``curl … | sh``, ``base64 -d | sh``, here-documents
  into a shell); network clients fetching public URLs without uploading;
  clouds' and databases' read commands. Held: a command word that expands
  (``$X``, ``$(...)``, a glob), ``eval``, ``exec``, ``sudo``, unknown commands,
  environment overrides that change what runs (``PATH=``, ``LD_PRELOAD=``...),
  a ``cd`` the gate cannot follow before a relative write, and anything that
  does not parse. Quoted text only mentioning a trigger word passes
  (``git commit -m "… rm -rf …"``, ``grep "DROP TABLE" schema.sql``).
* **Sensitive paths** are held whatever the tool, read or write (symlinks
  resolved): the ARS state directory, the policy file, ``.claude/settings*.json``
  (any project and ``~``), ``~/.claude.json``, ``.mcp.json``, ``.git/hooks/``,
  ``.envrc``, shell rc and profile files, ``~/.ssh``, ``~/.aws``, ``~/.gnupg``,
  ``~/.netrc``, ``~/.kube``, ``~/.docker/config.json``, ``~/.hermes/config.yaml``,
  ``~/.openclaw/openclaw.json`` and a few more credential files; writes to
  ``.git/config`` and ``~/.gitconfig``.
* **Write/Edit/MultiEdit/NotebookEdit** pass inside the project (or an extra
  write root); **Read/Glob/Grep/LS** pass unless they touch a sensitive path;
  **WebFetch** is held for private, loopback, link-local, unspecified and
  metadata addresses in every literal spelling (``core/inbox/netaddr.py``; no DNS
  lookups: a public name that resolves to a private address passes);
  **mcp__server__tool** is held unless allow-listed; Claude Code's harmless tools
  (Task, TodoWrite, WebSearch...) pass; unknown tools are held.

The project root is ``project_dir`` (the hook passes ``$CLAUDE_PROJECT_DIR``),
never the event's ``cwd``; ``cwd`` only resolves relative paths, and only when
it lies inside the project (elsewhere relative paths are unknown: held).

Checking is linear in the input and runs under a deadline (``deadline_s``,
0.8 s by default, so every decision comes within a second): tree-sitter's
error recovery is superlinear on some hostile inputs, so commands over
``INLINE_BYTES`` are checked in a forked child that is killed at the deadline.
Running out of time, a line of more than ``shell.MAX_TREE`` syntax nodes, or an
input over ``MAX_SUBJECT`` characters holds the call with a Match that says so
(the hook answers ``ask``; it is never killed by Claude Code's 60 s hook
timeout). A normal command is decided in a few milliseconds.

What stays outside any gate: a command the allow-list passes runs code the
agent may have written (``make``, ``pytest``, ``npm test``, ``python
script.py``, a sourced project file); that code can do whatever the user can.
The user's own shell start-up (aliases, functions) is trusted as it is.

The policy (``<state>/gate.toml``; ``Gate.parse(text, path)``) can widen the
allow-list and add holds::

    timeout = 50                       # seconds the hook waits for a person (below the hook's 60 s)

    [allow]
    commands = ["terraform", "ansible-lint"]   # more commands, any arguments (sensitive paths still held)
    mcp = ["mcp__github__get_*", "mcp__db__query"]   # MCP tools; '*' only at the end
    tools = ["MyCustomTool"]           # more Claude Code tools
    write_roots = ["/tmp", "~/scratch"]   # where writes may go besides the project

    [[rule]]                           # an extra hold: a regex searched in the tool input
    name = "no-prod"
    tool = "Bash"                      # "Bash", "Write|Edit", "mcp__*" (a prefix) or "*"
    pattern = '''\\bprod\\b'''          # linear-time only: no repeat inside a repeat
    field = "command"                  # optional: the input field searched ("*": every string)
    risk = "high"                      # low | medium | high
    reason = "mentions prod"

Nothing in the policy can pass a sensitive path. (Loading a signed policy is
not this module's job: ``Gate.load`` reads the file as it is.)

This runs on every tool call in a fresh process: the module imports only the
standard library; tree_sitter is imported for Bash calls only, and
``tomllib`` only when the policy differs from the default text.
"""

from __future__ import annotations

import json
import os
import re
import time

GATE_FILE = "gate.toml"
DEFAULT_TIMEOUT = 50.0  # below Claude Code's 60 s hook timeout
MAX_TIMEOUT = 3600.0
DEFAULT_DEADLINE = 0.8  # seconds to decide (Claude Code waits 60 s for the hook); then the call is held
MAX_SUBJECT = 1 << 20  # characters checked per input; longer inputs are held unchecked
INLINE_BYTES = 4096  # longer commands are parsed in a child process that can be killed at the deadline
MAX_MATCHES = 40  # reasons collected per call; past that the call is held anyway
RISKS = ("low", "medium", "high")
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
MAIN_FIELD = {"Bash": "command", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path", "Read": "file_path", "WebFetch": "url"}
RULE_KEYS = {"name", "tool", "pattern", "field", "risk", "reason", "outside_project", "allow_under"}
TOP_KEYS = {"timeout", "rule", "allow", "notify"}
ALLOW_KEYS = {"commands", "mcp", "tools", "write_roots"}
HARMLESS_TOOLS = frozenset({"Task", "Agent", "TodoWrite", "TodoRead", "WebSearch", "BashOutput", "KillShell",
                            "KillBash", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "Skill", "SlashCommand",
                            "ListMcpResourcesTool", "ReadMcpResourceTool", "TaskOutput", "TaskStop", "Think"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
DEFAULT_MCP = ("mcp__ars__recall", "mcp__ars__explain", "mcp__ars__check_approval", "mcp__ars__loops",
               "mcp__ars__startup_context", "mcp__ars__remember", "mcp__ars__request_approval")

DEFAULT_TIMEOUT_TEXT = f"{DEFAULT_TIMEOUT:g}"
DEFAULT_TOML = f"""\
# ARS gate for Claude Code (`ars hook claude-code`). Tool calls pass at once only
# when the built-in allow-list knows them to be harmless (read-only and everyday
# development commands, writes inside the project); everything else waits in the
# ARS inbox (`ars inbox list`, `ars inbox approve ID`, `ars inbox reject ID
# --reason R`) until a person decides. With no decision within `timeout` seconds
# the hook answers "ask" and Claude Code's own prompt takes over.
# Keep `timeout` below the hook's timeout in Claude Code's settings (60 s).
#
# Widen the allow-list (sensitive paths stay held whatever this file says):
#   [allow]
#   commands = ["terraform"]            # more commands, any arguments
#   mcp = ["mcp__github__get_*"]        # more MCP tools ('*' only at the end)
#   tools = ["MyTool"]                  # more Claude Code tools
#   write_roots = ["/tmp"]              # more places writes may go
# Be told of each new request where you are (JSON POST; ntfy and Slack-style URLs as they are):
#   [notify]
#   url = "https://ntfy.sh/my-ars-topic"    # format = "json" | "ntfy" | "slack" (else from the URL)
# Add holds: [[rule]] with name, tool ("Bash", "Write|Edit", "mcp__*", "*"),
# pattern (a Python regex, searched; no repeat inside a repeat unless possessive),
# field (default: the tool's main field; "*" = every string), risk, reason.

timeout = {DEFAULT_TIMEOUT_TEXT}
"""
# What tomllib reads from DEFAULT_TOML (a test holds the two equal): an unedited
# gate.toml is taken from here, so the hook's usual path never imports tomllib (~10 ms).
DEFAULT_DOC = {"timeout": int(DEFAULT_TIMEOUT) if DEFAULT_TIMEOUT.is_integer() else DEFAULT_TIMEOUT}
# Earlier ARS versions wrote regex deny-rules as the default file. Those rules
# (matched by a hash of name and pattern) are now the built-in parser's job and
# are dropped when such a file is read: kept, they would hold harmless quoted
# mentions again (git commit -m "... rm -rf ...").
_OLD_DEFAULT_RULES = frozenset({"151ce23ae01237a9", "dd835cc366d5a2e9", "fde69a8e2bb8046a", "f12dfe7a5ec0ed3f",
                                "4d53cded7ddc9d4c", "a0cdc296ba3a189f", "b386ef731a0e0ec6"})


class GateError(ValueError):
    """gate.toml cannot be used: one line naming the file and the problem."""


class Match:
    """A reason to hold a tool call: which rule, how risky, why (one line), and where."""

    __slots__ = ("rule", "risk", "reason", "excerpt")

    def __init__(self, rule: str, risk: str, reason: str, excerpt: str = ""):
        self.rule = rule
        self.risk = risk
        self.reason = reason
        self.excerpt = excerpt

    def __repr__(self) -> str:
        return f"Match({self.rule!r}, {self.risk!r}, {self.reason!r})"


class Rule:
    """An extra hold from the policy: a regex searched in a tool input."""

    __slots__ = ("name", "tools", "prefixes", "any_tool", "regex", "field", "risk", "reason")

    def __init__(self, name: str, tool: str, regex: re.Pattern, field: str | None, risk: str, reason: str):
        self.name = name
        names = [t.strip() for t in tool.split("|") if t.strip()]
        self.any_tool = "*" in names
        self.prefixes = tuple(t[:-1] for t in names if t.endswith("*") and t != "*")
        self.tools = frozenset(t for t in names if not t.endswith("*"))
        self.regex = regex
        self.field = field
        self.risk = risk
        self.reason = reason

    def applies_to(self, tool_name: str) -> bool:
        return self.any_tool or tool_name in self.tools or (bool(self.prefixes) and tool_name.startswith(self.prefixes))


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
        commands = _names(allow.get("commands", []), path, "commands")
        tools = _names(allow.get("tools", []), path, "tools")
        mcp = _names(allow.get("mcp", []), path, "mcp")
        for m in mcp:
            if not m.startswith("mcp__") or "*" in m[:-1]:
                raise GateError(f"{path}: [allow] mcp entry {m!r}: write mcp__<server>__<tool>, with '*' only at the "
                                "end (mcp__github__get_*)")
        roots = []
        for r in _names(allow.get("write_roots", []), path, "write_roots"):
            full = os.path.expanduser(r)
            if not os.path.isabs(full):
                raise GateError(f"{path}: [allow] write_roots entry {r!r} is not an absolute directory")
            roots.append(os.path.normpath(full))
        raw_rules = doc.get("rule", [])
        if not isinstance(raw_rules, list):
            raise GateError(f"{path}: `rule` must be an array of tables: write each rule as [[rule]]")
        rules = []
        for i, r in enumerate(raw_rules, 1):
            rule, allow_under = _rule(r, i, path)
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
        deadline = time.monotonic() + deadline_s
        ctx = _Ctx(self, project_dir, state_dir, home, cwd, deadline)
        try:
            self._check(ctx, tool_name, tool_input if isinstance(tool_input, dict) else {})
        except _OutOfTime:
            ctx.matches.append(Match("out-of-time", "medium",
                                     f"the gate ran out of time ({deadline_s:g} s) checking this call"))
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

    def _check(self, ctx: "_Ctx", tool_name: str, tool_input: dict) -> None:
        main = tool_input.get(MAIN_FIELD.get(tool_name, "file_path")) or tool_input.get("path") or tool_name
        ctx.excerpt = main[:200] if isinstance(main, str) else tool_name[:200]
        too_long = False
        for rule in self.rules:
            if not rule.applies_to(tool_name):
                continue
            subject = _subject(tool_name, tool_input, rule.field)
            if len(subject) > MAX_SUBJECT:
                too_long = True
                continue
            m = rule.regex.search(subject)
            if m is not None:
                ctx.matches.append(Match(rule.name, rule.risk, rule.reason, _excerpt(subject, m.start(), m.end())))
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
            odd = next((c for c in command if c in _CONTROL), None)
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
            ctx.write(_Word(target), None, tool=tool_name)
        elif tool_name in READ_TOOLS:
            ctx.read_tool(tool_name, tool_input)
        elif tool_name == "WebFetch":
            url = tool_input.get("url")
            if not isinstance(url, str) or not url:
                ctx.hold("private-address", "medium", "WebFetch without a URL", None)
                return
            ctx.url(_Word(url), None)
        elif tool_name.startswith("mcp__"):
            if not _mcp_allowed(tool_name, self.mcp):
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


# -- the policy's pieces --------------------------------------------------------------
def _names(value: object, path: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() and not any(c.isspace() for c in v)
                                              for v in value):
        raise GateError(f"{path}: [allow] {key} must be a list of names without spaces")
    return list(value)


def _mcp_allowed(tool_name: str, patterns: tuple[str, ...]) -> bool:
    for p in patterns:
        if p.endswith("*"):
            if tool_name.startswith(p[:-1]):
                return True
        elif tool_name == p:
            return True
    return False


def _rule(raw: object, index: int, path: str) -> tuple[Rule | None, list[str]]:
    """An extra hold (or, for a legacy ``outside_project`` rule, only its
    ``allow_under`` roots: the built-in gate holds writes outside the project)."""
    if not isinstance(raw, dict):
        raise GateError(f"{path}: rule {index} is not a table: write it as [[rule]] with key = value lines")
    name = raw.get("name", f"rule {index}")
    label = f"rule {index}" if not isinstance(name, str) else f"rule {name!r}"
    where = f"{path}: {label}"
    unknown = sorted(set(raw) - RULE_KEYS)
    if unknown:
        raise GateError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(RULE_KEYS))})")
    if not isinstance(name, str) or not name.strip():
        raise GateError(f"{where}: name must be a non-empty string")
    tool = raw.get("tool")
    if isinstance(tool, list) and all(isinstance(t, str) for t in tool):
        tool = "|".join(tool)
    if not isinstance(tool, str) or not tool.strip("| "):
        raise GateError(f"{where}: tool must name the tools it applies to (\"Bash\", \"Write|Edit\", \"mcp__*\" "
                        "or \"*\")")
    risk = raw.get("risk", "medium")
    if risk not in RISKS:
        raise GateError(f"{where}: risk must be one of {', '.join(RISKS)}, not {risk!r}")
    reason = raw.get("reason", name)
    if not isinstance(reason, str):
        raise GateError(f"{where}: reason must be a string")
    reason = " ".join(reason.split()) or name
    outside = raw.get("outside_project", False)
    if not isinstance(outside, bool):
        raise GateError(f"{where}: outside_project must be true or false")
    pattern = raw.get("pattern")
    if outside == (pattern is not None):
        raise GateError(f"{where}: give either pattern = '...' or outside_project = true (one of them)")
    allow = raw.get("allow_under", [])
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise GateError(f"{where}: allow_under must be a list of directories")
    roots = [os.path.normpath(os.path.expanduser(a)) for a in allow if os.path.isabs(os.path.expanduser(a))]
    field = raw.get("field")
    if field is not None and (not isinstance(field, str) or not field):
        raise GateError(f"{where}: field must name a tool-input field, or \"*\" for every string")
    if outside:
        return None, roots
    if not isinstance(pattern, str) or not pattern:
        raise GateError(f"{where}: pattern must be a non-empty string (a literal '''...''' keeps backslashes)")
    import hashlib

    if hashlib.sha256(f"{name}\0{pattern}".encode()).hexdigest()[:16] in _OLD_DEFAULT_RULES:
        return None, roots
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise GateError(f"{where}: pattern does not compile: {exc}") from None
    nested = nested_repeat(pattern)
    if nested:
        raise GateError(f"{where}: pattern repeats a repeat ({nested}), which can take exponential time on a "
                        "long input: rewrite it without a repeat inside a repeat, or make the inner one "
                        "possessive (*+, ++) or atomic (?>...)")
    return Rule(name.strip(), tool, regex, field, risk, reason), roots


def nested_repeat(pattern: str) -> str:
    """The first backtracking repeat inside a backtracking repeat (as text
    like ``'*' inside '+'``), or "" when there is none. Repeats of at most one
    (``?``) do not count; possessive repeats and atomic groups end the search
    (nothing backtracks into them)."""
    try:
        from re import _constants as c, _parser as p  # the parser re.compile itself uses
    except ImportError:  # pragma: no cover - another Python: skip the check
        return ""
    repeats = (c.MAX_REPEAT, c.MIN_REPEAT)
    stops = tuple(op for op in (getattr(c, "POSSESSIVE_REPEAT", None), getattr(c, "ATOMIC_GROUP", None)) if op)

    def show(lo: int, hi: int, lazy: bool) -> str:
        text = {(0, c.MAXREPEAT): "*", (1, c.MAXREPEAT): "+"}.get((lo, hi))
        text = text or (f"{{{lo},}}" if hi == c.MAXREPEAT else f"{{{lo},{hi}}}")
        return text + ("?" if lazy else "")

    def walk(node: object, outer: str) -> str:
        if isinstance(node, p.SubPattern):
            node = list(node)
        if isinstance(node, tuple) and len(node) == 2 and node[0] in repeats:
            lo, hi, body = node[1]
            if hi > 1:
                here = show(lo, hi, node[0] == c.MIN_REPEAT)
                if outer:
                    return f"{here!r} inside {outer!r}"
                return walk(body, here)
            return walk(body, outer)
        if isinstance(node, tuple) and len(node) == 2 and node[0] in stops:
            return ""
        if isinstance(node, (list, tuple)):
            for item in node:
                found = walk(item, outer)
                if found:
                    return found
        return ""

    try:
        return walk(p.parse(pattern), "")
    except re.error:  # re.compile reports it
        return ""


def _subject(tool_name: str, tool_input: dict, field: str | None) -> str:
    if field is None:
        field = MAIN_FIELD.get(tool_name, "*")
    if field != "*":
        value = tool_input.get(field)
        if isinstance(value, str):
            return value
        if value is None:
            return ""
        return json.dumps(value, ensure_ascii=False)
    return "\n".join(_strings(tool_input))


def _strings(value: object, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    if depth > 32:
        return out
    if isinstance(value, dict):
        for v in value.values():
            out.extend(_strings(v, depth + 1))
    elif isinstance(value, list):
        for v in value:
            out.extend(_strings(v, depth + 1))
    return out


def _excerpt(text: str, start: int, end: int, width: int = 160) -> str:
    lo = max(0, start - 40)
    hi = min(len(text), max(end, start + 1) + 80, lo + width)
    piece = " ".join(text[lo:hi].split())
    return ("…" if lo else "") + piece + ("…" if hi < len(text) else "")


# -- sibling modules, loaded by their files ------------------------------------------------
_SIBLINGS: dict[str, object] = {}


def _sibling(name: str):
    """core/inbox/<name>.py without importing the core.inbox package's other
    names: any caller that loads gate.py by its file still finds its siblings."""
    full = f"core.inbox.{name}"
    import sys

    mod = sys.modules.get(full) or _SIBLINGS.get(name)
    if mod is not None:
        return mod
    from importlib.machinery import ModuleSpec, SourceFileLoader

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    loader = SourceFileLoader(full, path)
    mod = type(sys)(full)
    mod.__spec__ = ModuleSpec(full, loader, origin=path)
    mod.__file__, mod.__loader__, mod.__package__ = path, loader, "core.inbox"
    loader.exec_module(mod)
    _SIBLINGS[name] = mod
    return mod


# -- what is sensitive -------------------------------------------------------------------------
RC_NAMES = frozenset({".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
                      ".zprofile", ".zlogin", ".zlogout", ".envrc", ".mcp.json", ".claude.json", ".kshrc", ".cshrc",
                      ".tcshrc", ".mkshrc", ".inputrc"})
HOME_SECRET_DIRS = (".ssh", ".aws", ".gnupg", ".kube", ".config/gcloud", ".azure", ".config/gh")
HOME_SECRET_FILES = (".netrc", ".claude.json", ".docker/config.json", ".hermes/config.yaml", ".openclaw/openclaw.json",
                     ".git-credentials", ".npmrc", ".pypirc", ".claude/.credentials.json", ".config/fish/config.fish",
                     ".config/git/credentials", ".config/hub", ".terraformrc", ".vault-token")
HOME_WRITE_ONLY = (".gitconfig", ".config/git/config", ".config/fish", ".config/direnv")
# names that, copied or moved into place, bring a sensitive file with them
PROTECTED_NAMES = frozenset({".claude", ".git", ".envrc", ".mcp.json", "hooks", ".ssh", ".aws", ".gnupg", ".kube",
                             ".netrc", ".docker", ".hermes", ".openclaw", ".config", ".claude.json"}) | RC_NAMES
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")
SYSTEM_BIN = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin",
              "/opt/local/bin", "/snap/bin", "/home/linuxbrew/.linuxbrew/bin")
HOME_BIN = (".local/bin", ".cargo/bin", "go/bin", ".npm-global/bin", ".bun/bin", ".deno/bin", ".pyenv/shims",
            ".nvm/versions", ".volta/bin", ".asdf/shims", ".rbenv/shims")

# environment variables whose value changes what later commands run
HELD_VARS = frozenset({"PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "CDPATH",
                       "GLOBIGNORE", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ZDOTDIR", "NODE_OPTIONS",
                       "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
                       "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "LESSOPEN", "LESSCLOSE", "BROWSER",
                       "SHELL", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "SUDO_ASKPASS",
                       "SSH_ASKPASS", "CURL_HOME", "WGETRC", "RUSTC_WRAPPER", "RUSTC", "RUSTDOC", "CC", "CXX", "LD",
                       "AR", "GOFLAGS", "MAKEFLAGS", "MFLAGS", "EXINIT", "VIMINIT", "GNUPGHOME", "KUBECONFIG",
                       "DOCKER_HOST", "DOCKER_CONFIG", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY",
                       "CLAUDE_PROJECT_DIR", "TERMINFO", "HISTFILE", "INPUTRC", "MAKE", "PROMPT_COMMANDS",
                       "LOCPATH", "GCONV_PATH", "NLSPATH", "MALLOC_CHECK_", "TZDIR", "HOSTALIASES", "RES_OPTIONS",
                       "LOCALDOMAIN", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                       "NODE_EXTRA_CA_CERTS", "PYTHONUSERBASE"})
HELD_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_", "NPM_CONFIG_", "ARS_", "PIP_", "UV_INDEX", "CARGO_BUILD_")
SAFE_GIT_VARS = frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                           "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_TRACE",
                           "GIT_TRACE2", "GIT_CURL_VERBOSE", "GIT_MERGE_AUTOEDIT", "GIT_CEILING_DIRECTORIES",
                           "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_PROGRESS_DELAY", "GIT_LFS_SKIP_SMUDGE",
                           "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_NO_CACHE_DIR", "PIP_QUIET", "PIP_NO_INPUT",
                           "PIP_REQUIRE_VIRTUALENV", "PIP_PROGRESS_BAR", "PIP_ROOT_USER_ACTION"})
SAFE_VALUES = {"EDITOR": {"true", ":", "cat"}, "VISUAL": {"true", ":", "cat"}, "GIT_EDITOR": {"true", ":", "cat"},
               "GIT_SEQUENCE_EDITOR": {"true", ":", "cat"}, "PAGER": {"cat", "less", "more", ""},
               "GIT_PAGER": {"cat", "less", "more", ""}, "MANPAGER": {"cat", "less", "more", ""},
               "SYSTEMD_PAGER": {"cat", "less", ""},
               "SHELL": {"/bin/sh", "/bin/bash", "/usr/bin/bash", "/bin/zsh", "/usr/bin/zsh", "sh", "bash", "zsh"},
               "CC": {"gcc", "clang", "cc", "tcc", "musl-gcc"}, "CXX": {"g++", "clang++", "c++"}}


_CONTROL = frozenset("\r\v\f\0\x1b") | frozenset(chr(c) for c in range(1, 32) if chr(c) not in "\t\n")


class _OutOfTime(Exception):
    pass


class _Word:
    """A path or URL from a non-shell tool, shaped like shell.Word."""

    __slots__ = ("value", "text", "glob")

    def __init__(self, value: str | None, text: str | None = None, glob: bool = False):
        self.value = value
        self.text = value if text is None else text
        self.glob = glob


class _Ctx:
    """One check: the places that matter (project, state, home), the paths
    seen, and the reasons to hold found so far. ``commands.py`` calls its
    read/write/in_project/url/net/hold."""

    def __init__(self, gate: Gate, project_dir, state_dir, home, cwd, deadline: float):
        self.gate = gate
        self.deadline = deadline
        self.matches: list[Match] = []
        self.excerpt = ""  # what a non-shell tool's hold quotes (its path, URL or name)
        self.functions: dict[str, str] = {}
        self.extra_commands = gate.commands
        self._real: dict[str, str] = {}
        self._sensitive: dict[tuple[str, bool], str | None] = {}
        self.home = os.path.normpath(os.path.abspath(os.path.expanduser(home or "~")))
        self.project = _clean_dir(project_dir)
        # a relative state directory (the default ./state) is where this process runs it from
        self.state = _clean_dir(os.path.abspath(os.fspath(state_dir))) if state_dir else None
        roots = [self.project] if self.project else []
        roots += [r for r in gate.write_roots if r]
        self.roots = [(r, self.realpath(r)) for r in roots]
        event_cwd = _clean_dir(cwd)
        # the event's cwd resolves relative paths only when it lies inside the project
        self.cwd = event_cwd if event_cwd and self.project and self._inside_roots(event_cwd, [self.roots[0]]) else None
        h = self.home
        secret_dirs = [os.path.join(h, d) for d in HOME_SECRET_DIRS]
        self.secrets = [(p, self.realpath(p)) for p in secret_dirs + [os.path.join(h, f) for f in HOME_SECRET_FILES]]
        guarded = list(secret_dirs)
        if self.state:
            guarded.append(self.state)
        if gate.path and os.path.isabs(gate.path):
            guarded.append(os.path.normpath(gate.path))
        self.guarded = [(p, self.realpath(p)) for p in guarded]  # the path or anything under it
        self.files = {os.path.join(h, f) for f in HOME_SECRET_FILES}
        self.files |= {self.realpath(f) for f in self.files}
        wo = {os.path.join(h, f) for f in HOME_WRITE_ONLY}
        self.write_only = wo | {self.realpath(f) for f in wo}
        self._glob_targets = None

    # -- bookkeeping --------------------------------------------------------------
    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _OutOfTime()

    def hold(self, rule: str, risk: str, reason: str, cmd, excerpt: str | None = None) -> None:
        if excerpt is None:
            excerpt = self.excerpt
            if cmd is not None:
                excerpt = cmd.text
                if cmd.context:
                    excerpt = f"{excerpt} (in {cmd.context})"
        self.matches.append(Match(rule, risk, " ".join(reason.split()), excerpt[:240]))

    def realpath(self, path: str) -> str:
        r = self._real.get(path)
        if r is None:
            try:
                r = os.path.realpath(path)
            except (OSError, ValueError):
                r = path
            self._real[path] = r
        return r

    # -- paths -------------------------------------------------------------------------
    def path_of(self, word, cwd: str | None) -> str | None:
        """The absolute, normalised path a word names (for a glob: the
        directory before its first pattern component), or None when unknown."""
        v = word.value if not isinstance(word, str) else word
        if v is None or "\0" in v or v == "":
            return None
        if getattr(word, "glob", False):
            parts = v.split("/")
            keep = []
            for part in parts:
                if any(ch in part for ch in "*?["):
                    if part.startswith(".") and not part.startswith(("./", "../")) and _could_be_dotdot(part):
                        return None
                    break
                keep.append(part)
            v = "/".join(keep) or ("/" if v.startswith("/") else ".")
        if not os.path.isabs(v):
            if cwd is None:
                return None
            v = os.path.join(cwd, v)
        return os.path.normpath(v)

    def sensitive(self, path: str, write: bool = False) -> str | None:
        """Why ``path`` is never touched without a person (the path and a
        phrase), or None."""
        key = (path, write)
        if key in self._sensitive:
            return self._sensitive[key]
        why = self._sensitive[key] = self._why_sensitive(path, write)
        return why

    def _why_sensitive(self, path: str, write: bool) -> str | None:
        for p in {path, self.realpath(path)}:
            shown = _tilde(p, self.home)
            for plain, real in self.guarded:
                for g in (plain, real):
                    if p == g or p.startswith(g.rstrip("/") + "/"):
                        what = "ARS's state directory" if self.state and g in (self.state, self.realpath(self.state)) \
                            else _tilde(g, self.home)
                        return f"{shown} (in {what})"
            if p in self.files:
                return f"{shown} (credentials or agent configuration)"
            base = os.path.basename(p)
            if base in RC_NAMES:
                return f"{shown} (a shell or agent start-up file)"
            if base.startswith("settings") and base.endswith(".json") and \
                    os.path.basename(os.path.dirname(p)) == ".claude":
                return f"{shown} (Claude Code's settings: hooks and permissions)"
            if "/.git/hooks/" in p + "/":
                return f"{shown} (a git hook: it runs on the next git command)"
            if write and (p.endswith("/.git/config") or p in self.write_only):
                return f"{shown} (git or shell configuration that can run commands)"
        return None

    def _glob_hits(self, pattern: str) -> str | None:
        """A sensitive path that an absolute glob ``pattern`` could match (bash
        semantics: a leading * or ? does not match a leading dot)."""
        if self._glob_targets is None:
            targets = [(p, True) for p, _r in self.guarded] + [(p, False) for p in self.files]
            if self.project:
                for rel, is_dir in ((".claude/settings.json", False), (".claude/settings.local.json", False),
                                    (".git/hooks", True), (".envrc", False), (".mcp.json", False),
                                    (".git/config", False)):
                    targets.append((os.path.join(self.project, rel), is_dir))
            targets += [(os.path.join(self.home, n), False) for n in RC_NAMES]
            targets += [(os.path.join(self.home, ".claude", "settings.json"), False)]
            self._glob_targets = targets
        from fnmatch import fnmatchcase

        pc = pattern.split("/")
        for target, is_dir in self._glob_targets:
            tc = target.split("/")
            if len(pc) < len(tc) or (len(pc) > len(tc) and not is_dir):
                continue
            ok = True
            for a, b in zip(pc, tc):
                if a == b:
                    continue
                if b.startswith(".") and a[:1] in ("*", "?", "["):
                    ok = False
                    break
                if not fnmatchcase(b, a):
                    ok = False
                    break
            if ok:
                return f"{_tilde(pattern, self.home)} (a pattern that can match {_tilde(target, self.home)})"
        return None

    def _inside_roots(self, path: str, roots=None) -> bool:
        roots = self.roots if roots is None else roots
        real = self.realpath(path)
        for plain, rroot in roots:
            if _under(path, plain) and _under(real, rroot):
                return True
        return False

    def _secret_below(self, path: str) -> str | None:
        """A credentials file or directory that reading all of ``path`` would include."""
        for p in (path, self.realpath(path)):
            base = p.rstrip("/") + "/"
            for plain, real in self.secrets:
                if plain.startswith(base) or real.startswith(base):
                    return f"it includes {_tilde(plain, self.home)}"
        return None

    # -- what commands.py calls ----------------------------------------------------------------
    def read(self, word, cmd, *, recursive: bool = False, listing: bool = False, tool: str = "") -> None:
        self.tick()
        cwd = cmd.cwd if cmd is not None else self.cwd
        what = tool or "it"
        if word.value is None:
            self.hold("unknown-path", "medium", f"{what} reads a path only known when it runs ({word.text[:60]})", cmd)
            return
        path = self.path_of(word, cwd)
        if path is None:
            self.hold("unknown-path", "medium", f"{what} reads {word.value[:80]}, relative to a directory the gate "
                                                "cannot know" if not word.glob else
                      f"{what} reads {word.value[:80]}, a pattern that can reach outside its directory", cmd)
            return
        why = self.sensitive(path)
        if why is None and word.glob:
            full = word.value if os.path.isabs(word.value) else os.path.join(cwd or "/", word.value)
            why = self._glob_hits(os.path.normpath(full))
        if why:
            self.hold("sensitive-path", "high", f"reads {why}", cmd)
            return
        if recursive and not listing:
            below = self._secret_below(path)
            if below:
                self.hold("sensitive-path", "high", f"reads everything under {_tilde(path, self.home)}: {below}", cmd)

    def write(self, word, cmd, *, tool: str = "") -> None:
        self.tick()
        cwd = cmd.cwd if cmd is not None else self.cwd
        if word.value is None:
            self.hold("unknown-path", "medium", f"writes a path only known when it runs ({word.text[:60]})", cmd)
            return
        v = word.value
        if v in DEVICES or v.startswith(("/dev/fd/", "/proc/self/fd/")):
            return
        path = self.path_of(word, cwd)
        if path is None:
            self.hold("unknown-path" if cmd is not None else "write-outside-project", "medium",
                      f"writes {v[:80]}, relative to a directory the gate cannot know" if not word.glob else
                      f"writes {v[:80]}, a pattern that can reach outside its directory", cmd,
                      None if cmd is not None else v[:200])
            return
        why = self.sensitive(path, write=True)
        if why is None and word.glob:
            why = self._glob_hits(os.path.normpath(word.value if os.path.isabs(word.value)
                                                   else os.path.join(cwd or "/", word.value)))
        if why:
            self.hold("sensitive-path", "high", f"writes {why}", cmd, None if cmd is not None else path)
            return
        if not self.roots:
            self.hold("write-outside-project", "medium", "writes with no project directory known "
                                                         "(CLAUDE_PROJECT_DIR is not set)", cmd,
                      None if cmd is not None else path)
            return
        if not self._inside_roots(path):
            real = self.realpath(path)
            where = _tilde(path, self.home) + (f" (really {_tilde(real, self.home)})" if real != path else "")
            self.hold("write-outside-project", "medium", f"writes outside the project directory: {where}", cmd,
                      None if cmd is not None else real)

    def write_into(self, sources, dest, cmd, *, recursive: bool, move: bool) -> None:
        """cp/mv/ln/install destinations: what lands where, including what a
        directory carries along (``cp -r template/. .`` brings template's
        .claude/settings.json; ``mv staging .claude`` makes staging's files
        Claude Code's settings). Directories are looked at as they are now,
        two levels deep."""
        if dest.value is None:
            self.write(dest, cmd)
            return
        dest_path = self.path_of(dest, cmd.cwd)
        into_dir = len(sources) > 1 or dest.value.endswith("/") or (dest_path is not None and os.path.isdir(dest_path))
        for src in sources:
            if src.value is None or dest_path is None:
                self.write(dest, cmd)
                continue
            base = os.path.basename(src.value.rstrip("/")) or src.value
            final = os.path.join(dest.value, base) if into_dir else dest.value
            self.write(type(dest)(final, dest.text), cmd)
            src_path = self.path_of(src, cmd.cwd)
            if (recursive or move) and src_path is not None and not src.glob and os.path.isdir(src_path):
                self._carried(src_path, final, dest, cmd, 2)

    def _carried(self, src_path: str, final: str, dest, cmd, depth: int) -> None:
        try:
            names = os.listdir(src_path)[:2000]
        except OSError:
            return
        protected_here = os.path.basename(os.path.normpath(final)) in PROTECTED_NAMES
        for name in names:
            if protected_here or name in PROTECTED_NAMES:
                target = os.path.join(final, name)
                self.write(type(dest)(target, dest.text), cmd)
                if depth > 1 and os.path.isdir(os.path.join(src_path, name)):
                    self._carried(os.path.join(src_path, name), target, dest, cmd, depth - 1)

    def inside(self, word, cmd, reason: str) -> None:
        path = self.path_of(word, cmd.cwd) if word.value is not None else None
        if path is None or not self._inside_roots(path):
            self.hold("outside-project", "medium", reason, cmd)

    def exists(self, word, cmd) -> bool:
        path = self.path_of(word, cmd.cwd)
        return path is not None and os.path.lexists(path)

    def in_project(self, cmd, why: str = "") -> None:
        name = cmd.name.value if cmd.name is not None and cmd.name.value else "it"
        what = why or f"{name} runs the project's tooling, which writes where it runs"
        if cmd.cwd is None:
            self.hold("unknown-cwd", "medium", f"{what}: in a directory the gate cannot know", cmd)
        elif not self.roots or not self._inside_roots(cmd.cwd):
            self.hold("outside-project", "medium", f"{what}: in {_tilde(cmd.cwd, self.home)}, outside the project",
                      cmd)
        else:
            why_s = self.sensitive(cmd.cwd)
            if why_s:
                self.hold("sensitive-path", "high", f"runs inside {why_s}", cmd)

    def url(self, word, cmd) -> None:
        if word.value is None:
            self.hold("dynamic-url", "high", f"a URL only known when it runs ({word.text[:60]})", cmd)
            return
        why = _sibling("netaddr").url_problem(word.value)
        if why:
            self.hold("private-address", "high", f"a request to {why}", cmd, None if cmd is not None else word.value)

    def net(self, words, cmd) -> None:
        """Any literal argument that names a sensitive path (a value of an
        option the gate does not model, an argument to a tool)."""
        for w in words:
            v = w.value
            if v is None or w.glob or len(v) > 4096 or "\n" in v or "://" in v:
                continue
            cands = [v]
            if v.startswith("-") and "=" in v:
                cands = [v.split("=", 1)[1]]
            elif v.startswith("-"):
                continue
            for c in cands:
                if "/" not in c and not c.startswith(".") and c not in RC_NAMES:
                    continue
                path = self.path_of(c, cmd.cwd)
                if path is None:
                    continue
                why = self.sensitive(path)
                if why:
                    self.hold("sensitive-path", "high", f"names {why}", cmd)

    def assignment(self, name: str, value, cmd) -> None:
        held = name in HELD_VARS or name.startswith(HELD_PREFIXES) or name.upper().endswith("_PROXY")
        if not held or name in SAFE_GIT_VARS or name.upper() == "NO_PROXY":
            return
        ok_values = SAFE_VALUES.get(name)
        if ok_values is not None and value.value is not None and value.value in ok_values:
            return
        self.hold("env-override", "high", f"sets {name}, which changes what later commands run or where they "
                                          "connect", cmd)

    def program(self, cmd, name: str) -> str | None:
        """A command word with a slash: the command it is (``/bin/rm`` is rm,
        ``.venv/bin/pytest`` is pytest), or None after holding it or passing
        it as a script of the project."""
        commands = _sibling("commands")
        path = self.path_of(name, cmd.cwd)
        if path is None:
            self.hold("unknown-path", "medium", f"runs {name[:80]}, relative to a directory the gate cannot know", cmd)
            return None
        why = self.sensitive(path)
        if why:
            self.hold("sensitive-path", "high", f"runs {why}", cmd)
            return None
        base = commands.normalize(os.path.basename(name))
        real = self.realpath(path)
        known = base in commands.TABLE or base in self.extra_commands
        system = os.path.dirname(path) in SYSTEM_BIN or os.path.dirname(real) in SYSTEM_BIN or \
            any(_under(path, os.path.join(self.home, d)) for d in HOME_BIN)
        if known and (system or self._inside_roots(path)):
            return base
        if self._inside_roots(path) and self._inside_roots(real):
            self.net(cmd.args, cmd)  # the project's own script: like `python script.py`
            return None
        self.hold("unknown-command", "medium", f"runs {_tilde(path, self.home)}, a program outside the project and "
                                               "the system's bin directories", cmd)
        return None

    def run(self, sub) -> None:
        """A command another one runs (env X, xargs X, npx X, timeout X)."""
        _sibling("commands").check(sub, self)

    # -- a whole Bash command line ------------------------------------------------------------
    def bash(self, command: str) -> None:
        shell = _sibling("shell")
        shell.parser()  # tree_sitter, imported here and not before: only Bash calls pay for it
        if len(command.encode("utf-8", "surrogateescape")) > INLINE_BYTES and hasattr(os, "fork"):
            self.matches.extend(self._bash_in_child(command))
        else:
            self._bash(command)

    def _bash(self, command: str) -> None:
        shell = _sibling("shell")
        commands = _sibling("commands")
        try:
            script = shell.parse(command, cwd=self.cwd, home=self.home, project=self.project,
                                 deadline=self.deadline)
        except shell.DoesNotParse as exc:
            self.hold("does-not-parse", "medium", str(exc), None, command[:200])
            return
        except shell.OutOfTime:
            raise _OutOfTime() from None
        except shell.TooLarge as exc:
            self.hold("too-large", "medium", str(exc), None, command[:200])
            return
        self.functions = script.functions
        for rule, reason, excerpt in script.problems:
            self.hold(rule, "high" if rule in ("line-continuation",) else "medium", reason, None, excerpt)
        for fname in script.functions:
            if fname in commands.TABLE or fname in ("cd", "pushd", "popd", "builtin", "command") or \
                    fname in self.extra_commands:
                self.hold("function-shadows", "high", f"defines a function named {fname}, which replaces the "
                                                      "command the gate checks", None, script.functions[fname])
        for cmd in script.commands:
            if len(self.matches) >= MAX_MATCHES:
                break  # held already; a person needs the first reasons, not every one of a hostile line's
            self.tick()
            for name, value in cmd.assigns:
                self.assignment(name, value, cmd)
            for r in cmd.redirects:
                if r.target is None:
                    continue
                if r.op in ("<", "<&") and not (r.target.value or "x").isdigit():
                    if r.op == "<":
                        self.read(r.target, cmd)
                elif r.writes:
                    self.write(r.target, cmd)
            commands.check(cmd, self)

    def _bash_in_child(self, command: str) -> list[Match]:
        """Check in a forked child, killed at the deadline: tree-sitter's error
        recovery can run for minutes on a hostile line, and the C parser does
        not stop for a Python signal."""
        import select
        import signal

        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: check, report, leave without running any of the parent's exit handlers
            code = 0
            try:
                os.close(r)
                try:
                    self._bash(command)
                except _OutOfTime:
                    self.matches.append(Match("out-of-time", "medium", "the gate ran out of time checking this call"))
                data = json.dumps([[m.rule, m.risk, m.reason, m.excerpt] for m in self.matches]).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view):]
            except BaseException:  # noqa: BLE001 - the parent holds the call when nothing comes back
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        chunks, done = [], False
        try:
            while True:
                left = self.deadline + 0.05 - time.monotonic()
                if left <= 0:
                    break
                ready, _, _ = select.select([r], [], [], left)
                if not ready:
                    break
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    done = True
                    break
                chunks.append(chunk)
        finally:
            if not done:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.waitpid(pid, 0)
            os.close(r)
        if not done:
            return [Match("out-of-time", "medium", "the gate ran out of time checking this call", command[:200])]
        try:
            rows = json.loads(b"".join(chunks) or b"null")
        except ValueError:
            rows = None
        if not isinstance(rows, list):
            return [Match("gate-error", "medium", "the gate's checker failed on this command", command[:200])]
        return [Match(*row) for row in rows]

    # -- Read, Glob, Grep, LS -----------------------------------------------------------------------
    def read_tool(self, tool: str, tool_input: dict) -> None:
        if tool in ("Read", "NotebookRead"):
            field = "file_path" if tool == "Read" else "notebook_path"
            target = tool_input.get(field)
            if not isinstance(target, str) or not target:
                self.hold("unknown-path", "medium", f"{tool} without a {field}", None)
                return
            self.read(_Word(target), None, tool=tool)
            return
        where = tool_input.get("path")
        base = where if isinstance(where, str) and where else (self.cwd or ".")
        if tool == "Glob":
            pattern = tool_input.get("pattern")
            if isinstance(pattern, str) and pattern:
                full = pattern if os.path.isabs(os.path.expanduser(pattern)) else os.path.join(base, pattern)
                self.read(_Word(os.path.expanduser(full), glob=any(c in full for c in "*?[")), None, listing=True,
                          tool=tool)
            self.read(_Word(os.path.expanduser(base)), None, listing=True, tool=tool)
            return
        self.read(_Word(os.path.expanduser(base)), None, recursive=(tool == "Grep"), listing=(tool == "LS"),
                  tool=tool)


def _clean_dir(path) -> str | None:
    if path is None:
        return None
    path = os.fspath(path)
    if not isinstance(path, str) or not path or "\0" in path or not os.path.isabs(os.path.expanduser(path)):
        return None
    return os.path.normpath(os.path.expanduser(path))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _could_be_dotdot(part: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase("..", part)


def _tilde(path: str, home: str) -> str:
    if path == home:
        return "~"
    if path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")):]
    return path
