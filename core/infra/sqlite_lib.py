"""The SQLite every part of ARS opens its files with (one seam, so the choice is
made once).

Python's ``sqlite3`` links the system library, 3.40 on Debian 12. Forgetting
needs FTS5's ``secure-delete`` option (SQLite 3.42+): without it a deleted
row's terms stay in older index segments until the whole index is merged
(``optimize``: about 1.6 s at 100,000 episodes). Before 3.54.0 that option has
a heap overflow on a damaged index (CVE-2026-119374), and the agent ARS
supervises can write ``memory.sqlite``. So:

* ``pysqlite3`` built against SQLite >= 3.54 (``scripts/sqlite/build``, run by
  ``make install``) is used when it is installed: ``FTS_SECURE_DELETE`` is True;
* otherwise the standard library's ``sqlite3``, and forget merges the index.

Once ``secure-delete`` has been used on an index, FTS5 marks it (file format 5)
and SQLite before 3.42 refuses to read it: ``fts_too_old`` names that case
so the tier can say what to run instead of a bare "invalid fts5 file format".
"""

from __future__ import annotations

SAFE_SECURE_DELETE = (3, 54, 0)  # CVE-2026-119374 fixed here

try:  # noqa: SIM105 - the fallback is the point
    from pysqlite3 import dbapi2 as sqlite3

    if sqlite3.sqlite_version_info < SAFE_SECURE_DELETE:
        raise ImportError(f"pysqlite3 links SQLite {sqlite3.sqlite_version}")
except ImportError:
    import sqlite3  # type: ignore[no-redef]

FTS_SECURE_DELETE = sqlite3.sqlite_version_info >= SAFE_SECURE_DELETE
VERSION = sqlite3.sqlite_version
BUILD_HINT = "run scripts/sqlite/build (make install does) for a SQLite that forgets without merging the index"


def fts_too_old(exc: BaseException) -> bool:
    """``exc`` is FTS5 refusing an index another ARS wrote with secure-delete
    (through fts5vocab, the same refusal reads "no such fts5 table")."""
    return any(s in str(exc) for s in ("invalid fts5 file format", "no such fts5 table"))


__all__ = ["BUILD_HINT", "FTS_SECURE_DELETE", "VERSION", "fts_too_old", "sqlite3"]
