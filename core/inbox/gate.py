"""The Claude Code gate: which tool calls wait for a person in the ARS inbox.

Rules live in ``<state>/gate.toml`` (written with the defaults below on first
use, 0600). Each ``[[rule]]`` names the tools it applies to, what it looks for
and how risky a match is::

    [[rule]]
    name = "git-reset-hard"
    tool = "Bash"                      # "Bash", "Write|Edit", "mcp__*" (a prefix), or "*"
    pattern = '''...'''                # a regex searched in the tool input (see `field`)
    risk = "high"                      # low | medium | high
    reason = "git reset --hard throws away uncommitted work"

or, instead of ``pattern``, ``outside_project = true``: a write whose path
resolves (symlinks followed) outside the project directory (the event's
``cwd``, or ``$CLAUDE_PROJECT_DIR``; ``allow_under = [...]`` adds roots).

What a pattern is searched in: ``field = "NAME"`` names a tool-input field;
without it, the tool's main field (Bash ``command``, Write/Edit/MultiEdit
``file_path``, NotebookEdit ``notebook_path``), or for other tools every
string in the input, one per line. ``field = "*"`` always means the latter.

This runs on every tool call an agent makes, in a fresh process, so the
module imports only the standard library (``re``, ``json``, ``os``, and
``tomllib`` once gate.toml differs from the defaults), and every pattern must
take linear time on a hostile input: a repeat inside a repeat (``(a+)+``,
``(\\s*x)*``) is refused when the file is loaded, unless the inner repeat is
possessive (``*+``, ``++``) or atomic.
The defaults keep their scans linear on a 1 MB command by construction (gaps
start only at a separator, or are bounded and possessive). An input longer
than ``MAX_SUBJECT`` characters is not searched: it is held for a person.

A malformed file raises ``GateError`` (one line naming the file and the
problem); the hook then answers ``ask``, never a silent allow.
"""

from __future__ import annotations

import json
import os
import re

GATE_FILE = "gate.toml"
DEFAULT_TIMEOUT = 50.0  # below Claude Code's 60 s hook timeout
MAX_TIMEOUT = 3600.0
MAX_SUBJECT = 1 << 20  # characters searched per field; longer inputs are held, not searched
RISKS = ("low", "medium", "high")
WRITE_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
MAIN_FIELD = {"Bash": "command", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
RULE_KEYS = {"name", "tool", "pattern", "field", "risk", "reason", "outside_project", "allow_under"}
TOP_KEYS = {"timeout", "rule"}


def _cmd(word: str) -> str:
    """A command word: at the start, or after whitespace, a separator, a quote
    or '/' (/bin/rm). The word comes first so the regex engine can skip to
    it; the look-behind then says "not preceded by anything else"."""
    return word + r"""(?<![^\s;&|(`'"{/]""" + word + ")"



def _words_until(word: str, most: int = 6) -> str:
    """Up to ``most`` shell words other than ``word`` (git's global options
    before its subcommand, say), taken possessively: nothing to backtrack."""
    return r"(?:\s++(?!" + re.escape(word) + r"\b)[^\s;&|]++){0," + str(most) + "}+"

DEFAULT_TIMEOUT_TEXT = f"{DEFAULT_TIMEOUT:g}"
_HEADER = """\
# ARS gate for Claude Code (`ars hook claude-code`): a tool call that matches a
# rule waits in the ARS inbox (`ars inbox list`, `ars inbox approve ID`,
# `ars inbox reject ID --reason R`) until a person decides; the agent gets
# allow or deny. With no decision within `timeout` seconds the hook answers
# "ask" and Claude Code's own prompt takes over (never a silent allow).
# Keep `timeout` below the hook's timeout in Claude Code's settings (60 s).
#
# [[rule]] keys: name, tool ("Bash", "Write|Edit", "mcp__*" as a prefix, "*"),
# pattern (a Python regex, searched) or outside_project = true (a write
# outside the project directory; allow_under = ["/tmp"] adds roots),
# field (the tool-input field searched; default: the tool's main field,
# "*" = every string), risk (low | medium | high), reason (one line).
# Patterns run on every tool call, on inputs up to 1 MB: no repeat inside a
# repeat unless the inner one is possessive (*+, ++) or atomic (?>...).
# Literal strings ('''...''') keep backslashes as they are.
"""

DEFAULT_RULES: list[dict] = [
    {"name": "rm-rf", "tool": "Bash",
     "pattern": _cmd("rm") + r"(?=(?:\s++-[^\s/]*+)*?\s++-(?:[a-qs-zA-QS-Z]*+[rR]|-recursive\b))"
                             r"(?=(?:\s++-[^\s/]*+)*?\s++-(?:[a-eg-zA-Z]*+f|-force\b))",
     "risk": "high", "reason": "rm -rf deletes recursively without asking"},
    {"name": "git-push-force", "tool": "Bash",
     "pattern": _cmd("git") + "(?=" + _words_until("push") + r"\s++push\b"
                r"(?:\s++(?![-+])[^\s;&|]++|\s++-(?!-force\b)[a-eg-zA-Z]*+(?![a-zA-Z])[^\s;&|]*+){0,12}+"
                r"\s++(?:--force\b|-[a-eg-zA-Z]*+f|\+[^\s;&|]))",
     "risk": "high", "reason": "git push --force rewrites the remote's history"},
    {"name": "git-reset-hard", "tool": "Bash",
     "pattern": _cmd("git") + "(?=" + _words_until("reset") + r"\s++reset\b" + _words_until("--hard", 8)
                + r"\s++--hard\b)",
     "risk": "high", "reason": "git reset --hard throws away uncommitted work"},
    {"name": "sql-drop-truncate", "tool": "Bash|mcp__*",
     "pattern": r"(?i)\bdrop\s++(?:table|database|schema|index|view|materialized\s++view|user|role|owned)\b"
                r"""|\btruncate\s++(?:table\s++)?(?:only\s++)?[\w"`\[]""",
     "risk": "high", "reason": "SQL DROP/TRUNCATE deletes data"},
    {"name": "kubectl-delete", "tool": "Bash",
     "pattern": _cmd("kubectl") + "(?=" + _words_until("delete", 8) + r"\s++delete\b)",
     "risk": "high", "reason": "kubectl delete removes cluster resources"},
    {"name": "pipe-to-shell", "tool": "Bash",
     # a segment (between | and newlines) naming curl/wget piped into a shell: it starts only at a
     # separator, so each segment is scanned once; or $(curl ...) / <(curl ...) handed to a shell
     "pattern": r"(?:^|[|\n])(?=[^|\n]*?\b(?:curl|wget)\b)[^|\n]*+\|\s*+(?:sudo\s++(?:-\S++\s++)?)?(?:env\s++)?"
                r"(?:ba|z|da|k|fi)?sh\b"
                r"""|\b(?:(?:ba|z|da|k)?sh|eval)\s++(?:-c\s++)?["']?\$\(\s*+(?:curl|wget)\b"""
                r"|<\(\s*+(?:curl|wget)\b",
     "risk": "high", "reason": "runs a script downloaded from the network (curl ... | sh)"},
    {"name": "write-outside-project", "tool": WRITE_TOOLS, "outside_project": True, "allow_under": [],
     "risk": "medium", "reason": "writes outside the project directory"},
]


def _toml_rule(rule: dict) -> str:
    lines = ["", "[[rule]]"]
    for key, value in rule.items():
        if key == "pattern":  # a literal string: backslashes as they are
            lines.append(f"{key} = '''{value}'''")
        elif isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        else:  # strings and lists of strings: JSON's escapes are TOML's
            lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


DEFAULT_TOML = _HEADER + f"\ntimeout = {DEFAULT_TIMEOUT_TEXT}\n" + "".join(_toml_rule(r) for r in DEFAULT_RULES)
# What tomllib reads from DEFAULT_TOML (a test holds the two equal): an unedited
# gate.toml is taken from here, so the hook's usual path never imports tomllib (~10 ms).
DEFAULT_DOC = {"timeout": int(DEFAULT_TIMEOUT) if DEFAULT_TIMEOUT.is_integer() else DEFAULT_TIMEOUT,
               "rule": DEFAULT_RULES}


class GateError(ValueError):
    """gate.toml cannot be used: one line naming the file and the problem."""


class Rule:
    __slots__ = ("name", "tools", "prefixes", "any_tool", "regex", "field", "risk", "reason",
                 "outside_project", "allow_under")

    def __init__(self, name: str, tool: str, regex: re.Pattern | None, field: str | None, risk: str,
                 reason: str, outside_project: bool, allow_under: tuple[str, ...]):
        self.name = name
        names = [t.strip() for t in tool.split("|") if t.strip()]
        self.any_tool = "*" in names
        self.prefixes = tuple(t[:-1] for t in names if t.endswith("*") and t != "*")
        self.tools = frozenset(t for t in names if not t.endswith("*"))
        self.regex = regex
        self.field = field
        self.risk = risk
        self.reason = reason
        self.outside_project = outside_project
        self.allow_under = allow_under

    def applies_to(self, tool_name: str) -> bool:
        return self.any_tool or tool_name in self.tools or (bool(self.prefixes) and tool_name.startswith(self.prefixes))


class Match:
    """A rule that holds a tool call: which, why, and how risky."""

    __slots__ = ("rule", "risk", "reason", "excerpt")

    def __init__(self, rule: str, risk: str, reason: str, excerpt: str = ""):
        self.rule = rule
        self.risk = risk
        self.reason = reason
        self.excerpt = excerpt

    def __repr__(self) -> str:
        return f"Match({self.rule!r}, {self.risk!r})"


class Gate:
    def __init__(self, rules: list[Rule], timeout: float = DEFAULT_TIMEOUT, path: str = ""):
        self.rules = rules
        self.timeout = timeout
        self.path = path

    # -- loading -----------------------------------------------------------------
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
            raise GateError(f"{path}: unknown key {unknown[0]!r}: the file holds `timeout` and [[rule]] tables")
        timeout = doc.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
            raise GateError(f"{path}: timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, "
                            f"not {timeout!r}")
        raw_rules = doc.get("rule", [])
        if not isinstance(raw_rules, list):
            raise GateError(f"{path}: `rule` must be an array of tables: write each rule as [[rule]]")
        rules = [_rule(r, i, path) for i, r in enumerate(raw_rules, 1)]
        return cls(rules, float(timeout), path)

    # -- checking ----------------------------------------------------------------
    def check(self, tool_name: str, tool_input: dict, cwd: str | None = None) -> list[Match]:
        """Every rule that holds this call, highest risk first (file order within a risk)."""
        found: list[Match] = []
        subjects: dict[str | None, str] = {}
        too_long = False
        for rule in self.rules:
            if not rule.applies_to(tool_name):
                continue
            if rule.outside_project:
                where = _outside(tool_input, cwd, rule.allow_under)
                if where is not None:
                    found.append(Match(rule.name, rule.risk, rule.reason, where))
                continue
            if rule.field not in subjects:
                subjects[rule.field] = _subject(tool_name, tool_input, rule.field)
            subject = subjects[rule.field]
            if len(subject) > MAX_SUBJECT:
                too_long = True
                continue
            m = rule.regex.search(subject)
            if m is not None:
                found.append(Match(rule.name, rule.risk, rule.reason, _excerpt(subject, m.start(), m.end())))
        if too_long:
            found.append(Match("too-long", "high", f"the tool input is longer than {MAX_SUBJECT} characters, "
                                                   "too long for the gate to check"))
        order = {r: i for i, r in enumerate(reversed(RISKS))}
        found.sort(key=lambda m: order.get(m.risk, len(RISKS)))
        return found


def write_defaults(state_dir: str | os.PathLike) -> str:
    """Write the default gate.toml (0600, atomically); returns its path."""
    from core.fsutil import atomic_write, private_dir  # stdlib-only module

    private_dir(state_dir)
    path = os.path.join(os.fspath(state_dir), GATE_FILE)
    atomic_write(path, DEFAULT_TOML)
    return path


# -- rules ---------------------------------------------------------------------
def _rule(raw: object, index: int, path: str) -> Rule:
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
    field = raw.get("field")
    if field is not None and (not isinstance(field, str) or not field):
        raise GateError(f"{where}: field must name a tool-input field, or \"*\" for every string")
    regex = None
    if pattern is not None:
        if not isinstance(pattern, str) or not pattern:
            raise GateError(f"{where}: pattern must be a non-empty string (a literal '''...''' keeps backslashes)")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise GateError(f"{where}: pattern does not compile: {exc}") from None
        nested = nested_repeat(pattern)
        if nested:
            raise GateError(f"{where}: pattern repeats a repeat ({nested}), which can take exponential time on a "
                            "long input: rewrite it without a repeat inside a repeat, or make the inner one "
                            "possessive (*+, ++) or atomic (?>...)")
    return Rule(name.strip(), tool, regex, field, risk, reason, outside,
                tuple(os.path.expanduser(a) for a in allow))


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


# -- what a rule looks at --------------------------------------------------------
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


def _outside(tool_input: dict, cwd: str | None, allow_under: tuple[str, ...]) -> str | None:
    """The resolved path when a write lands outside every project root, else None.
    A write whose path cannot be read, or with no root to compare, is outside."""
    target = tool_input.get("file_path")
    if not isinstance(target, str):
        target = tool_input.get("notebook_path")
    if not isinstance(target, str) or not target or "\0" in target:
        return "(no readable file path)"
    roots = [r for r in (cwd, os.environ.get("CLAUDE_PROJECT_DIR"), *allow_under)
             if isinstance(r, str) and r and "\0" not in r and os.path.isabs(r)]
    if not os.path.isabs(target):
        if not roots:
            return target
        target = os.path.join(roots[0], target)
    real = os.path.realpath(target)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return None
    return real
