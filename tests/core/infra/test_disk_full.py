"""SQLite's "disk I/O error" on a full file system is told as a full disk."""
from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from core.infra.disk_full import as_disk_full
from core.infra.sqlite_lib import sqlite3


def test_an_io_error_with_plenty_of_space_stays_an_io_error(tmp_path: Path):
    assert as_disk_full(sqlite3.OperationalError("disk I/O error"), tmp_path) is None


def test_other_sqlite_errors_are_left_alone(tmp_path: Path):
    assert as_disk_full(sqlite3.OperationalError("no such table: x"), tmp_path) is None


def test_an_io_error_on_a_full_file_system_is_a_full_disk(tmp_path: Path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()[:80]}")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            with pytest.raises(OSError):
                while True:
                    os.write(fd, b"x" * 4096)
        finally:
            os.close(fd)
        full = as_disk_full(sqlite3.OperationalError("disk I/O error"), mnt)
        assert full is not None and full.errno == errno.ENOSPC
        assert full.filename == str(mnt) and "disk I/O error" in full.strerror
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
