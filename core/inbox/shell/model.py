"""What a parse yields: the simple commands that run (words, redirections,
feeds), the script around them, the limits of a walk and its errors."""

from __future__ import annotations

from core.inbox.cpu_clock import CLOCK  # a check's deadline: CPU seconds of the checking thread (why: there)
from core.inbox.shell.quoting import short_text


MAX_DEPTH = 200  # nested constructs; deeper lines are held, not walked (Python's stack stays small)
MAX_TREE = 60_000  # syntax nodes (counted by tree-sitter, free); a line with more is held as too large to check
MAX_NODES = 60_000  # statements and words walked; the same, for what the count lets through
CHECK_EVERY = 512  # nodes between deadline checks


class DoesNotParse(ValueError):
    """The line does not parse as bash: where, in one line."""


class OutOfTime(RuntimeError):
    """The deadline passed while parsing or walking."""


class TooLarge(ValueError):
    """More statements and words than MAX_NODES: held without reading the rest."""


class Word:
    """One shell word: ``value`` after quote removal (``None`` when it expands
    to something the gate cannot know), the source ``text``, ``glob`` when an
    unquoted ``*``, ``?`` or ``[`` makes it a pattern."""

    __slots__ = ("value", "text", "glob")

    def __init__(self, value: str | None, text: str, glob: bool = False):
        self.value = value
        self.text = text
        self.glob = glob

    @property
    def dynamic(self) -> bool:
        return self.value is None

    def __repr__(self) -> str:
        return f"Word({self.value!r}{', glob' if self.glob else ''})" if self.value is not None \
            else f"Word(<dynamic {self.text[:40]!r}>)"


class Redirect:
    """``op`` is the operator as written (``>``, ``>>``, ``<``, ``&>``, ``>&``,
    ``<<``, ``<<-``, ``<<<``...), ``fd`` the descriptor before it (or None),
    ``target`` the word after it (None for a here-document), ``body`` a
    here-document's or here-string's text (None when it expands)."""

    __slots__ = ("op", "fd", "target", "body", "_text")

    def __init__(self, op: str, fd: str | None, target: Word | None, body: str | None, text):
        self.op = op
        self.fd = fd
        self.target = target
        self.body = body
        self._text = text

    @property
    def text(self) -> str:
        return _text_of(self)

    @property
    def writes(self) -> bool:
        """Opens its target for writing: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``,
        ``<>``, and ``>&`` to a file (``>&2``, ``>&-`` copy or close a descriptor)."""
        if self.op in ("<", "<<", "<<-", "<<<", "<&"):
            return False
        if self.op == ">&" and self.target is not None and self.target.value is not None \
                and (self.target.value.isdigit() or self.target.value == "-"):
            return False
        return True

    def __repr__(self) -> str:
        return f"Redirect({self.fd or ''}{self.op} {self.target!r})"


class Feed:
    """What feeds a command's standard input: ``kind`` is ``pipe``,
    ``heredoc``, ``herestring`` or ``file``; ``text`` the here-document or
    here-string (None when it expands), or an excerpt of the stage before."""

    __slots__ = ("kind", "text", "_by")

    def __init__(self, kind: str, text: str | None, by=""):
        self.kind = kind
        self.text = text
        self._by = by

    @property
    def by(self) -> str:
        if not isinstance(self._by, str):
            self._by = str(self._by)
        return self._by

    def __repr__(self) -> str:
        return f"Feed({self.kind}, {self.by[:40]!r})"


class Command:
    """One simple command that may run (or a bare assignment / redirection,
    ``name`` None)."""

    __slots__ = ("name", "args", "redirects", "assigns", "stdin", "cwd", "context", "_text", "declaration")

    def __init__(self, name: Word | None, text, cwd: str | None, context: str):
        self.name = name
        self.args: list[Word] = []
        self.redirects: list[Redirect] = []
        self.assigns: list[tuple[str, Word]] = []
        self.stdin: Feed | None = None
        self.cwd = cwd
        self.context = context
        self._text = text  # a str, or a Span turned into one when first read (most commands never are)
        self.declaration = False  # export/declare/local/readonly/typeset: its assigns persist

    @property
    def text(self) -> str:
        """The command's source, whitespace folded, cut to 200 characters."""
        return _text_of(self)

    def __repr__(self) -> str:
        name = self.name.value if self.name is not None and self.name.value is not None else \
            (None if self.name is None else "<dynamic>")
        return f"Command({name!r}, {[a.value for a in self.args]!r}, cwd={self.cwd!r})"


class Script:
    """Everything a line runs: ``commands`` in order, ``functions`` it defines
    (name -> the first command word of the body's text), ``problems`` found
    while reading it (``(rule, reason, excerpt)``)."""

    __slots__ = ("commands", "functions", "problems", "text")

    def __init__(self, text: str):
        self.commands: list[Command] = []
        self.functions: dict[str, str] = {}
        self.problems: list[tuple[str, str, str]] = []
        self.text = text


class Span:
    """Source text not cut out until someone reads it (an excerpt for a hold)."""

    __slots__ = ("walker", "start", "end")

    def __init__(self, walker, start: int, end: int):
        self.walker = walker
        self.start = start
        self.end = end

    def __str__(self) -> str:
        return short_text(self.walker.span(self.start, self.end))


def _text_of(obj) -> str:
    t = obj._text
    if not isinstance(t, str):
        t = obj._text = str(t)
    return t
