"""A progress bar on stderr for the long commands (``ars rebuild``, ``ars sync backfill``):
a callback ``(done, total)`` the core calls after each batch. Nothing is drawn when stderr
is not a terminal or with ``--json`` (the final line or document says what was done)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from tui.cli.common import err


@contextmanager
def progress_bar(what: str, unit: str = "", show: bool = True,
                 scale: int = 1) -> Iterator[Callable[[int, int], None] | None]:
    """``scale``: counts shown divided by it (2**20 with unit "MB" for bytes)."""
    if not show or not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    # short enough for 80 columns: what, the bar, %, "58 / 176 MB", time left
    columns = [TextColumn(what), BarColumn(bar_width=24), TaskProgressColumn(), TextColumn("{task.fields[counts]}"),
               TimeRemainingColumn()]
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(what, total=None, counts="")  # no total until the first batch says it

        def step(done: int, total: int) -> None:
            shown = f"{done // scale:,} / {total // scale:,} {unit}".rstrip()
            bar.update(task, completed=done, total=total, counts=shown)

        yield step
