"""The policy file's pieces: a Match (a reason to hold), a Rule (an extra hold:
a regex searched in a tool input), the checks that read ``[allow]`` and
``[[rule]]`` tables, and where a rule looks in a tool input."""

from __future__ import annotations

import json
import os
import re

from core.inbox.gate.defaults import MAIN_FIELD, OLD_DEFAULT_RULES, RISKS, RULE_KEYS


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


# -- the policy's pieces --------------------------------------------------------------
def name_list(value: object, path: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() and not any(c.isspace() for c in v)
                                              for v in value):
        raise GateError(f"{path}: [allow] {key} must be a list of names without spaces")
    return list(value)


def mcp_allowed(tool_name: str, patterns: tuple[str, ...]) -> bool:
    for p in patterns:
        if p.endswith("*"):
            if tool_name.startswith(p[:-1]):
                return True
        elif tool_name == p:
            return True
    return False


def parse_rule(raw: object, index: int, path: str) -> tuple[Rule | None, list[str]]:
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

    if hashlib.sha256(f"{name}\0{pattern}".encode()).hexdigest()[:16] in OLD_DEFAULT_RULES:
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


def subject_of(tool_name: str, tool_input: dict, field: str | None) -> str:
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


def excerpt_of(text: str, start: int, end: int, width: int = 160) -> str:
    lo = max(0, start - 40)
    hi = min(len(text), max(end, start + 1) + 80, lo + width)
    piece = " ".join(text[lo:hi].split())
    return ("…" if lo else "") + piece + ("…" if hi < len(text) else "")
