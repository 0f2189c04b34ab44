"""Where the recall daemon of a state directory and configuration listens.

Stdlib only: this runs in every fresh ``ars recall --json`` before anything
else is imported.

A daemon answers exactly as a fresh process would, so its address is keyed by
everything that decides the answer besides the state directory: the ``ARS_*``
settings in the environment, the interpreter, and the code (size and mtime of
every module of ``core`` and ``tui``). Another configuration, or an upgraded
ARS, gets a daemon of its own; an old one finds nobody asking and exits when
idle. The socket lives in ``<state>/daemon/`` (0700, like the state directory
itself), or, when that path is too long for a Unix socket, in a private
per-user directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# SHA-256 without ``hashlib``, whose OpenSSL binding costs ~3 ms of every fresh ``ars recall``
# (python -X importtime): CPython's own module is ``_sha2`` from 3.12, ``_sha256`` before.
try:
    from _sha2 import sha256
except ImportError:
    try:
        from _sha256 import sha256
    except ImportError:  # an interpreter built without them
        from hashlib import sha256

MODE_ENV = "ARS_RECALL_DAEMON"  # auto (default) | off
IDLE_ENV = "ARS_RECALL_DAEMON_IDLE"  # seconds without a request before the daemon exits
MODES = ("auto", "off")
DIR_NAME = "daemon"
# Not part of the key: where the state is (the directory is the key's other half),
# whether to use a daemon at all, and whether to show tracebacks.
UNKEYED = {"ARS_STATE_DIR", MODE_ENV, "ARS_DEBUG"}
KEYED_EXTRA = {"OPENAI_API_KEY"}  # a settings field read without the ARS_ prefix
MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS


def mode(env=os.environ) -> str | None:
    """``auto`` or ``off``; None for a value ARS does not know (the full
    settings check then reports it as a one-line error)."""
    value = env.get(MODE_ENV, "auto").strip().lower() or "auto"
    return value if value in MODES else None


def _code_stamp() -> list[tuple[str, int, int]]:
    root = Path(__file__).resolve().parents[2]  # the directory holding core/ and tui/
    out: list[tuple[str, int, int]] = []

    # os.scandir and joined names, not os.walk and relpath: this runs in every fresh `ars recall`
    # over ~350 modules (os.walk + relpath took ~4 ms of it).
    def walk(path: str, rel: str) -> None:
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            if e.name.endswith(".py"):
                try:
                    st = e.stat()
                except OSError:
                    continue
                if not e.is_dir():
                    out.append((rel + e.name, st.st_size, st.st_mtime_ns))
            elif e.name != "__pycache__" and e.is_dir(follow_symlinks=False):  # as os.walk: no link loops
                walk(e.path, rel + e.name + os.sep)

    for package in ("core", "tui"):
        walk(os.path.join(root, package), package + os.sep)
    return out


def fingerprint(env=os.environ) -> str:
    """A short hash of what, besides the state directory, decides an answer."""
    keyed = sorted((k.upper(), v) for k, v in env.items()
                   if (k.upper().startswith("ARS_") or k.upper() in KEYED_EXTRA) and k.upper() not in UNKEYED)
    h = sha256()
    h.update(repr((sys.executable, sys.version, keyed, _code_stamp())).encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


def state_path(state: str | os.PathLike | None, env=os.environ) -> Path:
    """The absolute state directory a command means (``--state``, else
    ``ARS_STATE_DIR``, else ``./state``), as the settings resolve it."""
    raw = state if state is not None else env.get("ARS_STATE_DIR") or "state"
    return Path(os.path.abspath(os.fspath(raw)))


def socket_dir(state: Path) -> Path:
    """The directory of ``state``'s daemon sockets (not created here): in the
    state directory, unless its path is too long for a socket or it is
    read-only (a read-only mount still gets its daemon)."""
    preferred = state / DIR_NAME
    if len(os.fsencode(preferred)) + 30 <= MAX_SOCKET_PATH and (
            os.path.isdir(preferred) or os.access(state, os.W_OK)):
        return preferred
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    tag = sha256(os.fsencode(state)).hexdigest()[:12]
    return Path(base) / f"ars-{os.getuid()}" / tag


def socket_path(state: Path, fp: str) -> Path:
    return socket_dir(state) / f"recall-{fp}.sock"


def socket_dir_ok(sock_dir: Path, state: Path) -> bool:
    """The socket directory, and the per-user directory above it when it is
    not in the state directory, are ours and private."""
    return private_dir_ok(sock_dir) and (sock_dir.parent == state or private_dir_ok(sock_dir.parent))


def private_dir_ok(path: Path) -> bool:
    """``path`` is a directory of ours that nobody else can enter: a socket in
    it cannot be reached, or planted, by another user."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    import stat as _stat

    return _stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
