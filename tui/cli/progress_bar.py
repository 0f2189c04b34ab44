"""A progress bar on stderr for the long commands (``ars rebuild``, ``ars sync backfill``):
a callback ``(done, total)`` the core calls after each batch. Nothing is drawn when stderr
is not a terminal or with ``--json`` (the final line or document says what was done)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from tui.cli.common import err


@contextmanager
def progress_bar(what: str, unit: str = "", show: bool = True) -> Iterator[Callable[[int, int], None] | None]:
    if not show or not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, \
        TimeRemainingColumn

    columns = [TextColumn(what), BarColumn(), TaskProgressColumn(),
               TextColumn(f"{{task.completed:,.0f}} / {{task.total:,.0f}} {unit}".rstrip()),
               TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(what, total=None)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield step
