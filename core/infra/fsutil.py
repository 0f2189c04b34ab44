"""Durable, private file writes: atomic replace, fsync'd appends, 0600/0700.

Transcripts and memories hold secrets (tokens pasted into a chat, hosts,
paths), so everything ARS writes under a state directory is private to its
owner whatever the umask: directories 0700, files 0600.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) 0700, or tighten it to 0700 if
    it exists and is ours. Returns the path."""
    path = Path(path)
    try:
        path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(f"{path} exists and is not a directory") from None
    try:
        st = path.stat()
        if stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.getuid():
            os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
    except OSError:
        pass  # not ours to change: the files inside are still created 0600
    return path


def tighten_tree(root: Path) -> int:
    """Make an existing state directory private (one written by an older ARS
    under umask 022): directories 0700, files 0600. Returns how many changed."""
    changed = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid() or not stat.S_IMODE(st.st_mode) & 0o077:
                    continue
                os.chmod(p, stat.S_IMODE(st.st_mode) & ~0o077)
                changed += 1
            except OSError:
                continue
    return changed


class NotARegularFile(OSError):
    """A name ARS reads that is a symlink, a FIFO, a device or a directory, or
    larger than the reader's cap: something planted, never a file ARS wrote."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    Opened without following a symlink and without blocking (a FIFO opens at once
    and is refused by its type), checked with ``fstat`` on the open descriptor (no
    race with a rename), and read at most ``limit + 1`` bytes (a 3 GB sparse file
    costs one read of the cap). ``FileNotFoundError`` when absent; ``NotARegularFile``
    (one line naming what it is) otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if os.path.islink(path):  # ELOOP under O_NOFOLLOW; a dangling one is planted just the same
            raise NotARegularFile(exc.errno, "a symbolic link, not a file ARS wrote", str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(0, "not a regular file (a FIFO, device or directory)", str(path))
        if st.st_size > limit:
            raise NotARegularFile(0, f"{st.st_size:,} bytes, over the {limit:,}-byte cap", str(path))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise NotARegularFile(0, f"grew past the {limit:,}-byte cap while read", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def create_private(path: Path) -> None:
    """Make sure ``path`` exists as a 0600 file (before a library such as
    sqlite3 creates it with the umask's mode)."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE))


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``path`` so a crash leaves either the old or the new file, never half.

    Temp file in the same directory (rename is atomic only within one file
    system), fsync the file, rename over, fsync the directory.
    """
    path = Path(path)
    if not path.parent.is_dir():
        private_dir(path.parent)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_line(path: Path, line: str, *, fsync: bool = True) -> None:
    """Append one line; if the file ends in a torn line (a crash mid-write),
    start on a fresh line so the new record is never glued to the torn one."""
    path = Path(path)
    if not path.parent.is_dir():
        private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    with os.fdopen(fd, "ab+") as fh:
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
        fh.write(line.encode("utf-8") + b"\n")
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())
