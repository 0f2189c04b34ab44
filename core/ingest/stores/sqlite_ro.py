"""Open an agent's SQLite database read-only, without disturbing the agent.

The seam for one SQLite quirk: a ``mode=ro`` connection to a WAL database whose
``-wal``/``-shm`` files do not exist (the agent is not running, or shut down
cleanly) creates them and cannot remove them again, leaving files the agent did
not write. So a WAL database without a ``-wal`` file is opened ``immutable``
(no files created, no locks taken) and the read is checked afterwards: if the
main file changed while it was read (a writer started and checkpointed), the
read is thrown away and done again with the agent's WAL in place. A database
that is busy (a writer recovering it) is retried, not reported as an error.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Callable, TypeVar
from urllib.parse import quote

T = TypeVar("T")

BUSY_RETRIES = 8  # attempts; waits double from BUSY_FIRST_WAIT, about 2.5 s in all
BUSY_FIRST_WAIT = 0.02


class StoreBusy(Exception):
    """The database stayed locked through every retry: read it next time."""


def _is_wal(path: Path) -> bool:
    """The database header says WAL (bytes 18 and 19 are 2)."""
    with open(path, "rb") as fh:
        head = fh.read(20)
    return len(head) == 20 and head[18] == 2 and head[19] == 2


def _stamp(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


def _connect(path: Path, immutable: bool) -> sqlite3.Connection:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
    conn = sqlite3.connect(uri, uri=True, timeout=0.5, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    return conn


def read_store(path: str | Path, read: Callable[[sqlite3.Connection], T]) -> T:
    """``read(conn)`` on a read-only connection to the database at ``path``.

    ``read`` must do all its reading inside the call (it may be run twice)."""
    path = Path(path)
    wait = BUSY_FIRST_WAIT
    for _ in range(BUSY_RETRIES):
        try:
            return _read_once(path, read)
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if "locked" not in text and "busy" not in text:
                raise
        time.sleep(wait)
        wait *= 2
    raise StoreBusy(f"{path.name}: the database stayed busy (its agent is writing); it is read on the next run")


def _read_once(path: Path, read: Callable[[sqlite3.Connection], T]) -> T:
    wal = Path(f"{path}-wal")
    if _is_wal(path) and not wal.exists():
        before = _stamp(path)
        conn = _connect(path, immutable=True)
        try:
            result = read(conn)
        finally:
            conn.close()
        if _stamp(path) == before and not wal.exists():
            return result
        # a writer started while we read: read again the ordinary way, its WAL now exists
    conn = _connect(path, immutable=False)
    try:
        conn.execute("BEGIN")  # one snapshot for the whole read
        return read(conn)
    finally:
        conn.close()


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def tables_of(path: str | Path) -> set[str]:
    """The table names of a SQLite file (empty when it is not one, or cannot be read)."""
    try:
        return read_store(path, lambda c: {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")})
    except (sqlite3.Error, OSError, StoreBusy):
        return set()


SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: str | Path) -> bool:
    """A regular file that starts with SQLite's header. Opened non-blocking and checked on the
    descriptor: a FIFO or device named or found in a folder must never hang ingestion."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, 16) == SQLITE_MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)
