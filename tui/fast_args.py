"""The one small argument parser in front of typer, for the fast paths (``ars recall
--json``, ``ars ingest STORE --json``, ``ars tui``): each is a fresh process an agent
or a person waits for, and building the typer app costs ~100+ ms.

It accepts only the plain forms of a fixed grammar and returns None for anything
else (``--help``, an unknown or repeated option, a value that looks like an option,
``-k5``): the typer CLI then parses the line and answers, or says what is wrong,
exactly as it always has. Stdlib only.
"""

from __future__ import annotations


class Parsed:
    """A plain class, not a dataclass: ``dataclasses`` imports ``inspect``, ~9 ms of every
    fresh process these fast paths serve (python -X importtime)."""

    __slots__ = ("args", "options", "flags")

    def __init__(self) -> None:
        self.args: list[str] = []  # the positional arguments
        self.options: dict[str, str] = {}  # option name -> its value
        self.flags: set[str] = set()

    def __repr__(self) -> str:
        return f"Parsed(args={self.args!r}, options={self.options!r}, flags={self.flags!r})"


def parse(argv: list[str], *, options: tuple[str, ...] = (), flags: tuple[str, ...] = ()) -> Parsed | None:
    """``argv`` split by the grammar: ``options`` take one value (``--name VALUE`` or
    ``--name=VALUE``), ``flags`` none; a lone ``-`` and everything after ``--`` are
    positional. None when a word is not of the grammar."""
    got = Parsed()
    i, rest_are_args = 0, False
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if rest_are_args or not a.startswith("-") or a == "-":
            got.args.append(a)
        elif a == "--":
            rest_are_args = True
        elif a in flags:
            got.flags.add(a)
        elif name in options and name not in got.options:
            if not eq:
                if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                    return None
                i += 1
                value = argv[i]
            elif not name.startswith("--"):
                return None  # -k=5 is not what typer reads it as
            got.options[name] = value
        else:
            return None
        i += 1
    return got
