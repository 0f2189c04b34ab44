"""The walk over a tree-sitter tree, and ``parse``: what a command line runs."""

from __future__ import annotations

import os

from core.inbox.shell.model import (CLOCK, CHECK_EVERY, MAX_NODES, MAX_TREE, DoesNotParse, OutOfTime, Redirect, Script, Span,
                                    TooLarge)
from core.inbox.shell.quoting import short_text
from core.inbox.shell.simple import SimpleCommands
from core.inbox.shell.state import State
from core.inbox.shell.statements import Statements
from core.inbox.shell.treesitter import first_error, parse_tree
from core.inbox.shell.words import Words


class _Walker(Statements, SimpleCommands, Words):
    """One walk: the source, the script it fills, and the count and deadline that bound it."""

    def __init__(self, src: bytes, text: str, script: Script, home: str, deadline: float | None):
        self.src = src
        self.text = text
        self.script = script
        self.home = home
        self.deadline = deadline
        self.count = 0
        # byte offsets -> text: the source is decoded once; ASCII lines map 1:1, others through a table
        self.ascii = len(src) == len(text)
        # the grammar hangs `a && b > f` and `a | b > f` on the whole list or pipeline; bash gives the
        # redirections to the last command (b). Keyed by that command's span, taken when it is reached.
        self.tail: dict[tuple[int, int], list[Redirect]] = {}
        self.cd_functions: set[str] = set()  # functions whose body changes directory (a sourced file is code
        # the agent runs, beyond any gate: its cd is not followed)

    # -- helpers ------------------------------------------------------------------
    def tick(self) -> None:
        self.count += 1
        if self.count % CHECK_EVERY == 0:
            if self.deadline is not None and CLOCK() > self.deadline:
                raise OutOfTime("walking the command ran out of time")
            if self.count > MAX_NODES:
                raise TooLarge(f"more than {MAX_NODES:,} commands and words: too large to check")

    def s(self, node) -> str:
        if self.ascii:
            return self.text[node.start_byte:node.end_byte]
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def span(self, a: int, b: int) -> str:
        if self.ascii:
            return self.text[a:b]
        return self.src[a:b].decode("utf-8", "surrogateescape")

    def lazy(self, node) -> Span:
        return Span(self, node.start_byte, node.end_byte)

    def problem(self, rule: str, reason: str, node) -> None:
        self.script.problems.append((rule, reason, short_text(self.s(node))))


def parse(text: str, *, cwd: str | None = None, home: str | None = None, project: str | None = None,
          deadline: float | None = None) -> Script:
    """What ``text`` runs (see the module docstring). ``cwd``: where it starts
    (None: unknown); ``home``: what ``~`` and ``$HOME`` are; ``project``: the
    value of ``$CLAUDE_PROJECT_DIR``. ``deadline`` is a ``CLOCK()`` value (CPU seconds of this thread)."""
    src = text.encode("utf-8", "surrogateescape")
    tree = parse_tree(src, deadline)
    root = tree.root_node
    if root.descendant_count > MAX_TREE:
        raise TooLarge(f"{root.descendant_count:,} syntax nodes (more than {MAX_TREE:,}): too large to check")
    if root.has_error:
        bad = first_error(root)
        if bad is None:
            where = "somewhere"
        else:
            line, col = bad.start_point
            piece = src[bad.start_byte:bad.start_byte + 40].decode("utf-8", "replace")
            what = f"missing {bad.type!r}" if bad.is_missing else f"unexpected {' '.join(piece.split())[:40]!r}"
            where = f"line {line + 1}, column {col + 1}: {what}"
        raise DoesNotParse(f"does not parse as a shell command ({where})")
    home = home or os.path.expanduser("~")
    script = Script(text)
    vars_ = {"HOME": home}
    if cwd is not None:
        vars_["PWD"] = cwd
    if project:
        vars_["CLAUDE_PROJECT_DIR"] = project
    walker = _Walker(src, text, script, home, deadline)
    walker.seq(root.children, State(cwd, vars_), "", 0)
    return script
