"""The one-paragraph help each command shows in a command list.

typer (0.29, rich markup) keeps a docstring's single line breaks in the list
of commands (``ars --help``, ``ars loop --help``), so a docstring wrapped at
100 columns printed as ragged half-lines beside every command. Each command
without its own ``short_help`` gets its docstring's first paragraph on one
line; rich then wraps it to the terminal. Its own ``--help`` is unchanged.
"""

from __future__ import annotations

import inspect

import typer


def first_paragraph(doc: str | None) -> str | None:
    """A docstring's first paragraph with its line breaks joined, or None."""
    if not doc:
        return None
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())


def fill_short_help(app: typer.Typer) -> None:
    """Give every command of ``app`` and of its groups a one-line short help."""
    for info in app.registered_commands:
        if info.short_help is None:
            info.short_help = first_paragraph(info.help or (info.callback.__doc__ if info.callback else None))
    for group in app.registered_groups:
        if group.typer_instance is not None:
            fill_short_help(group.typer_instance)
