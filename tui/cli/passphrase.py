"""How a deciding command gets the supervisor's passphrase: from the terminal or from
``--passphrase-fd N``, as a ``bytearray`` that is zeroed once the key is unlocked, never a
``str``. Stdlib only: tui/entry.py calls ``take_early`` before anything else is imported.

* ``--passphrase-fd N`` is read at once, at the start of the process, and closed. Until
  then another process of the same user could open ``/proc/PID/fd/N`` (a pipe opened
  through /proc is a second reader of the same pipe) and drain it; the process is made
  non-dumpable first, after which ``/proc/PID/fd`` is root's. What a pipe held before
  ``ars`` started is beyond this: give the fd from a file or a pipe written just then.
* The terminal: ``/dev/tty`` (never stdin: an agent's Bash tool has a stdin but no
  terminal of the supervisor's), echo off, pending input discarded first (keys typed
  ahead into the terminal, by ``tmux send-keys`` or TIOCSTI, are not taken as the
  passphrase). The prompt shows what the agent cannot fake into *this* terminal: the
  pinned key's fingerprint and the hash of exactly what will run (README, "The real prompt").
"""

from __future__ import annotations

import hmac
import os

MAX_PASSPHRASE = 4096
FLAG = "--passphrase-fd"


class PassphraseProblem(Exception):
    """One line for a person: no passphrase could be read (exit 2)."""


_taken: dict[int, list[bytearray] | str] = {}  # fd -> its lines, or why they could not be read


# -- --passphrase-fd -----------------------------------------------------------------------------
def fd_number(argv: list[str]) -> int | None:
    """N of ``--passphrase-fd N`` (or ``=N``) in ``argv``; None when absent or not a number."""
    for i, a in enumerate(argv):
        value = argv[i + 1] if a == FLAG and i + 1 < len(argv) else a[len(FLAG) + 1:] if a.startswith(FLAG + "=") \
            else None
        if value is not None:
            try:
                return int(value)
            except ValueError:
                return None
    return None


def take_early(argv: list[str]) -> None:
    """Read and close the ``--passphrase-fd`` of this command line now (the process made
    non-dumpable first); ``lines`` hands the lines out later."""
    fd = fd_number(argv)
    if fd is None or fd < 0 or fd in _taken:
        return
    from core.hook_api import no_dumps

    no_dumps()
    _taken[fd] = _drain(fd, 2 if "--rotate" in argv else 1)


def lines(fd: int) -> list[bytearray]:
    """The lines read from ``fd`` (read now if ``take_early`` did not); PassphraseProblem if none."""
    if fd not in _taken:
        from core.hook_api import no_dumps

        no_dumps()
        _taken[fd] = _drain(fd, 2)
    got = _taken[fd]
    if isinstance(got, str):
        raise PassphraseProblem(got)
    return got


def next_line(fd: int) -> bytearray:
    """The next passphrase on ``fd`` (its first line, then its second for --rotate)."""
    got = lines(fd)
    if not got:
        raise PassphraseProblem(f"{FLAG} {fd}: it gave no passphrase (nothing came on it: if you wrote one to it, "
                                "another process may have read it first; then rotate the key with "
                                "`ars supervisor init --rotate`)")
    if not len(got[0]):
        raise PassphraseProblem(f"{FLAG} {fd}: it gave no passphrase (an empty first line)")
    return got.pop(0)


def _drain(fd: int, need: int) -> list[bytearray] | str:
    """Up to ``need`` lines from ``fd``, read in as few reads as it takes, then the fd closed
    (0-2 pointed at /dev/null instead, so nothing else takes their numbers)."""
    from core.hook_api import wipe

    import stat

    try:
        kind = os.fstat(fd).st_mode
    except OSError:
        kind = 0
    if stat.S_ISFIFO(kind):  # any process of the user can open /proc/PID/fd/N of a pipe and drain it first
        _close(fd)
        return (f"{FLAG} {fd} is a pipe, and any process of your user can read a pipe through /proc before "
                "ars does: pass a socket (socket.socketpair(); see the README) or use the terminal; if a "
                "passphrase was written to that pipe, change it (ars supervisor init --rotate)")
    buf = bytearray(MAX_PASSPHRASE * need + need)
    n = 0
    try:
        while n < len(buf) and buf.count(b"\n", 0, n) < need:
            got = os.readv(fd, [memoryview(buf)[n:]])
            if got == 0:
                break
            n += got
    except OSError as exc:
        return (f"{FLAG} {fd}: cannot read it ({exc.strerror or exc}): open it for reading, e.g. "
                f"`{fd}<passphrase-file`")
    finally:
        _close(fd)
    out: list[bytearray] = []
    start = 0
    for _ in range(need if n else 0):  # nothing at all came: no lines (not one empty one)
        end = buf.find(b"\n", start, n)
        stop = n if end < 0 else end
        if stop > start and buf[stop - 1] == 0x0D:  # a CRLF line
            stop -= 1
        out.append(_copy(buf, start, stop))
        if end < 0:
            break
        start = end + 1
    wipe(buf)
    if any(len(x) > MAX_PASSPHRASE for x in out):
        return f"{FLAG} {fd}: its first line is longer than {MAX_PASSPHRASE} bytes"
    return out


def _close(fd: int) -> None:
    try:
        if fd <= 2:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, fd)
            os.close(null)
        else:
            os.close(fd)
    except OSError:
        pass


# -- the terminal ----------------------------------------------------------------------------------
def has_tty() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def from_tty(header: str, ask: str, *, confirm: bool = False) -> bytearray:
    """The passphrase typed on this process's terminal (echo off), after ``header``;
    PassphraseProblem when there is none, nothing is typed, or the two differ (``confirm``).
    Input typed before the prompt shows (by a person or by ``tmux send-keys``) is discarded."""
    import termios

    from core.hook_api import no_dumps, wipe

    no_dumps()
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        raise PassphraseProblem("this needs the supervisor's passphrase and there is no terminal to ask on: run it "
                                f"on your terminal, or pass {FLAG} N") from None
    first = again = None
    try:
        old = termios.tcgetattr(fd)
        quiet = termios.tcgetattr(fd)
        quiet[3] = (quiet[3] & ~termios.ECHO) | termios.ICANON
        try:
            termios.tcsetattr(fd, termios.TCSAFLUSH, quiet)  # FLUSH: what was typed ahead is not the passphrase
            os.write(fd, (header + ask).encode("utf-8", "replace"))
            first = _read_line(fd)
            os.write(fd, b"\n")
            if confirm:
                os.write(fd, b"again: ")
                again = _read_line(fd)
                os.write(fd, b"\n")
        except KeyboardInterrupt:
            wipe(first)
            raise PassphraseProblem("no passphrase given: nothing was decided") from None
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, old)
    finally:
        os.close(fd)
    if again is not None:
        same = hmac.compare_digest(first, again)
        wipe(again)
        if not same:
            wipe(first)
            raise PassphraseProblem("the two passphrases differ: nothing was changed")
    if not len(first):
        raise PassphraseProblem("no passphrase given: nothing was decided")
    return first


def _read_line(fd: int) -> bytearray:
    """One line from the terminal (canonical mode: the tty driver edits it), without its newline."""
    from core.hook_api import wipe

    buf = bytearray(MAX_PASSPHRASE + 1)
    n = 0
    try:
        while n < len(buf) and buf.find(b"\n", 0, n) < 0:
            got = os.readv(fd, [memoryview(buf)[n:]])
            if got == 0:  # ctrl-d
                break
            n += got
        end = buf.find(b"\n", 0, n)
        return _copy(buf, 0, n if end < 0 else end)
    finally:
        wipe(buf)


def _copy(buf: bytearray, start: int, stop: int) -> bytearray:
    """``buf[start:stop]`` as a new bytearray, without an intermediate copy left unzeroed."""
    out = bytearray(stop - start)
    out[:] = memoryview(buf)[start:stop]
    return out


def prompt_header(fingerprint: str | None, what: str, request=None) -> str:
    """The real prompt's head: the pinned key's fingerprint, the decision, and for a request
    exactly what will run with the first 12 hex digits of its hash (README, "The real prompt")."""
    lines_ = ["", f"ARS supervisor key {fingerprint or '(none)'}", f"sign: {what}"]
    if request is not None:
        detail = " ".join(str(getattr(request, "detail", "") or "").split())
        if detail:
            lines_.append(f"runs: {detail[:300]}" + ("…" if len(detail) > 300 else ""))
        lines_.append(f"exact hash: {short_hash(request.exact_hash())}   (ars inbox show {request.id})")
    return "\n".join(lines_) + "\n"


def short_hash(h: str) -> str:
    """``sha256:1a2b…`` as people compare it: the first 12 hex digits, in groups of four."""
    hexpart = h.split(":", 1)[-1][:12]
    return " ".join(hexpart[i:i + 4] for i in range(0, len(hexpart), 4))
