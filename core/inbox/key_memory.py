"""Keeping the unlocked key and the passphrase out of other processes' reach.

The agent runs as the same user. On Linux a process of the same user may read
another's memory (``/proc/PID/mem``, ptrace) and open its file descriptors
(``/proc/PID/fd/N``) unless the kernel says no; Yama's ``ptrace_scope`` >= 1 says
no to non-ancestors, but many kernels run without Yama (this machine's does).
``PR_SET_DUMPABLE=0`` says no for one process whatever Yama does: its ``/proc/PID``
entries belong to root, ptrace needs CAP_SYS_PTRACE, and it writes no core dump.
Every process that reads the passphrase or holds the unlocked key calls
``no_dumps()`` before it does (the CLI deciding, ``ars tui``, ``ars serve``, each
web dashboard, and ``signing.unlock``/``init`` themselves).

What stays outside (README, "Who can decide"): a same-user process that attached
with ptrace *before* ``no_dumps()`` (possible only where ptrace_scope is 0 or
absent), root, and a kernel that ignores the flag.

Wiping: a passphrase is read into a ``bytearray`` that is zeroed once the key is
unlocked (never a ``str``, which cannot be zeroed and is copied freely).
``wipe_bytes`` also zeroes a ``bytes`` object this process made itself and
holds the only reference to (CPython's layout); anything else is left to
``no_dumps()``. Stdlib only.
"""

from __future__ import annotations

import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
PR_SET_PDEATHSIG = 1
YAMA = "/proc/sys/kernel/yama/ptrace_scope"

_done = False


def _prctl(option: int, arg: int) -> int | None:
    """``prctl(option, arg)``'s result, or None where there is no prctl (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def no_dumps() -> bool:
    """Make this process non-dumpable (Linux; a no-op elsewhere). True when it is now."""
    global _done
    if _done:
        return True
    if _prctl(PR_SET_DUMPABLE, 0) == 0:
        _done = True
    return _done


def dumpable() -> bool | None:
    """Whether this process is dumpable (None where it cannot be told)."""
    got = _prctl(PR_GET_DUMPABLE, 0)
    return None if got is None or got < 0 else bool(got)


def die_with_parent(sig: int) -> bool:
    """Be sent ``sig`` when the parent exits (Linux: PR_SET_PDEATHSIG); True when set."""
    return _prctl(PR_SET_PDEATHSIG, int(sig)) == 0


def wipe(buf: bytearray | memoryview | None) -> None:
    """Zero a mutable buffer in place (its length is kept)."""
    if buf is None:
        return
    view = memoryview(buf).cast("B")
    view[:] = bytes(len(view))


def wipe_bytes(data: bytes | None) -> None:
    """Zero a ``bytes`` object this process made (a decrypted seed, a derived key) and
    holds alone. CPython only; objects of 0 or 1 byte are shared singletons and are left."""
    if data is None or type(data) is not bytes or len(data) < 2 or sys.implementation.name != "cpython":
        return
    if sys.getrefcount(data) > 3:  # the caller's name, this argument, getrefcount's own: more is shared
        return
    import ctypes

    offset = sys.getsizeof(data) - len(data) - 1  # PyBytesObject: header, then ob_sval[len + 1]
    ctypes.memset(id(data) + offset, 0, len(data))


def ptrace_warning(path: str = YAMA) -> str:
    """One line when another process of this user may read ARS's memory and your keystrokes
    (ptrace_scope 0, or no Yama at all on Linux); "" when the kernel keeps ptrace to ancestors
    or further. ``path``: the sysctl's file (another one in tests)."""
    if not sys.platform.startswith("linux"):
        return ""
    try:
        with open(path, encoding="ascii") as fh:
            scope = fh.read().strip()
    except OSError:
        scope = ""
    if scope and scope != "0":
        return ""
    if scope == "0":
        why, fix = "kernel.yama.ptrace_scope is 0", "set `sysctl -w kernel.yama.ptrace_scope=1` (or 2)"
    else:
        why, fix = "this kernel has no Yama (no ptrace_scope)", "use a kernel built with Yama and ptrace_scope 1"
    return (f"{why}: any process of your user (an agent too) may attach to your terminal, shell or editor and read "
            f"what you type, the supervisor passphrase included; ARS's own key-holding processes refuse it "
            f"(PR_SET_DUMPABLE=0), others do not: {fix}, or run agents as another user")
