"""``IN (...)`` over many values: SQLite caps the parameters of one statement,
so the list goes in chunks of ``CHUNK`` (one statement per chunk)."""

from __future__ import annotations

from core.infra.sqlite_lib import sqlite3
from typing import Any, Iterable, Iterator, Sequence

CHUNK = 500


def rows_in(conn: sqlite3.Connection, sql: str, values: Iterable[Any], before: Sequence[Any] = (),
            after: Sequence[Any] = ()) -> Iterator[tuple]:
    """The rows of ``sql`` for every chunk of ``values``; ``{in}`` in ``sql``
    stands for the chunk's placeholders, ``before``/``after`` are the
    parameters on either side of them."""
    values = list(values)
    for i in range(0, len(values), CHUNK):
        chunk = values[i : i + CHUNK]
        yield from conn.execute(sql.replace("{in}", ",".join("?" * len(chunk))), [*before, *chunk, *after])
