"""The recall daemon of one state directory and configuration.

``python -m tui.daemon.server --state DIR --fingerprint FP`` (started by
tui/daemon/client.py; ``ars daemon`` shows and stops it). It holds one ARS,
so the imports, the Neo4j driver's connections and SQLite's statistics stay
warm, and answers one JSON line per connection with exactly what a fresh
``ars recall --json`` would print (tui/fast_recall.py's ``answer``).

Kept in step with the state directory before every answer, as a fresh
process would see it: a store another process replaced (``ars rebuild``) is
reopened, and ledger events SQLite has not applied yet are applied (the same
non-waiting recover a fresh process runs on open). It exits when idle
(``ARS_RECALL_DAEMON_IDLE``, default 600 s), when its state directory is gone
or replaced, when its socket is taken away, or when asked (``ars daemon stop``).

Only this user can connect: the socket is 0600 in a 0700 directory, and a
peer of another uid is refused (SO_PEERCRED) where the platform tells.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
from pathlib import Path

from tui.daemon import address

DEFAULT_IDLE = 600.0
CHECK_EVERY = 2.0  # seconds between checks that the state directory and socket are still ours
MAX_REQUEST = 16 << 20
WARM_DEADLINE = 10.0  # seconds each tier may take for the warm-up recall (ARS.warm)
WARM_ROUNDS = 12  # warm-up recalls at most, while a just-started Neo4j is still slow (ARS.warm)


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Daemon:
    def __init__(self, state: Path, fp: str, idle: float):
        self.state = state
        self.fp = fp
        self.idle = idle
        self.sock_path = address.socket_path(state, fp)
        self.started = time.time()
        self.last = time.monotonic()
        self.served = 0
        self.reopened = 0
        self._lock = threading.Lock()  # one recall at a time: ARS is one store, used as a fresh process would
        self._ars = None
        self._store_id = None
        self._state_id = _file_id(state)
        self._sock_id = None
        self.ready = False
        self._rewarming = False
        self._rewarmed = float("-inf")
        self.server: socketserver.UnixStreamServer | None = None

    # -- the ARS, in step with the state directory ------------------------------
    def _open(self):
        from core.api import ARS, load_settings

        self._ars = ARS(load_settings(state_dir=self.state), create=False)
        self._store_id = _file_id(self.state / "memory.sqlite")

    def ars(self):
        if self._ars is not None and _file_id(self.state / "memory.sqlite") != self._store_id:
            self._ars.close()  # replaced under us (ars rebuild): read the new file, as a new process would
            self._ars = None
            self.reopened += 1
        if self._ars is None:
            self._open()
        else:
            self._ars.refresh()  # ledger events other processes wrote, as ARS() applies them on open
        return self._ars

    def warm(self) -> None:
        """Open the store and run one recall with roomy deadlines before
        answering anyone: the Neo4j connection, its query plan and SQLite's
        statistics are paid for here (repeated, at most WARM_ROUNDS times, while
        a just-started Neo4j still answers slower than half its read deadline), not by a client's deadline. Until this
        is done, a client is told so at once and answers by itself."""
        try:
            with self._lock:
                self.ars().warm(deadline=WARM_DEADLINE, rounds=WARM_ROUNDS)
        except Exception:  # noqa: BLE001 - a recall error is the client's to see, per request
            pass
        finally:
            self.ready = True
            self.last = time.monotonic()

    # -- requests -----------------------------------------------------------------
    def handle(self, message: dict) -> dict:
        op = message.get("op")
        if op == "status":
            from core.api import rss_mb

            return {**rss_mb(), "pid": os.getpid(), "state": os.fspath(self.state), "fingerprint": self.fp,
                    "socket": os.fspath(self.sock_path), "started": self.started, "served": self.served,
                    "reopened": self.reopened, "ready": self.ready, "idle_exit_s": self.idle,
                    "idle_s": round(time.monotonic() - self.last, 1)}
        if op == "stop":
            threading.Thread(target=self.stop, daemon=True).start()
            return {"stopping": os.getpid()}
        if op in ("context", "capture"):
            return self._turn_op(op, message)
        if op != "recall":
            return {"error": f"unknown op {op!r}"}
        from tui.fast_recall import RecallArgs, answer

        try:
            args = RecallArgs.from_request(message)
        except (KeyError, TypeError, ValueError):
            return {"error": "malformed recall request"}
        if not self.ready:
            return {"error": "warming up"}  # the client answers by itself meanwhile
        if not self._still_ours():
            threading.Thread(target=self.stop, daemon=True).start()
            return {"error": "state directory gone"}  # the client answers by itself
        with self._lock:
            self.last = time.monotonic()
            ars = self.ars()
            code, out, err = answer(args, ars=ars)
            self.served += 1
            self.last = time.monotonic()
        self._rewarm(ars)
        return {"code": code, "stdout": out, "stderr": err, "host": _host_of(ars)}

    def _turn_op(self, op: str, message: dict) -> dict:
        """An agent's turn: the context it gets (``ARS.context``), or its capture
        (``ARS.capture_turn``); the reply of tui/daemon/turns.py."""
        from tui.daemon import turns

        try:
            call = turns.context_call(message) if op == "context" else turns.capture_call(message)
        except (KeyError, TypeError, ValueError) as exc:
            return {"error": f"malformed {op} request: {exc}"}
        if not self.ready:
            return {"error": "warming up"}  # the turn goes on without it
        if not self._still_ours():
            threading.Thread(target=self.stop, daemon=True).start()
            return {"error": "state directory gone"}
        with self._lock:
            self.last = time.monotonic()
            reply = call(self.ars())
            self.served += 1
            self.last = time.monotonic()
        return reply

    def _rewarm(self, ars) -> None:
        """After Neo4j failed an answer (a restart leaves a cold JVM whose first
        plans miss every read deadline), plan the search once off the read path,
        at most once per breaker cooldown, so the daemon's answers get Neo4j back
        in seconds rather than one timed-out probe at a time."""
        now = time.monotonic()
        if not ars.graph_troubled():
            return
        if self._rewarming or now - self._rewarmed < ars.settings.neo4j_breaker_cooldown:
            return
        self._rewarming, self._rewarmed = True, now

        def work() -> None:
            try:
                ars.warm_graph()
            finally:
                self._rewarming = False
        threading.Thread(target=work, daemon=True, name="ars-daemon-rewarm").start()

    def _still_ours(self) -> bool:
        return _file_id(self.state) == self._state_id and _file_id(self.sock_path) == self._sock_id

    # -- life -----------------------------------------------------------------------
    def serve(self) -> int:
        sock_dir = self.sock_path.parent
        try:
            for d in ([sock_dir.parent, sock_dir] if sock_dir.parent != self.state else [sock_dir]):
                d.mkdir(mode=0o700, exist_ok=True)
            if not address.socket_dir_ok(sock_dir, self.state):
                return 1
            lock = open(self.sock_path.with_suffix(".lock"), "a")
            os.chmod(lock.name, 0o600)
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another daemon has it (or nowhere to listen): nothing to do
        try:
            self.sock_path.unlink(missing_ok=True)  # a killed daemon's: the lock says nobody serves it
            _sweep(sock_dir, self.sock_path)
            daemon = self

            class Handler(socketserver.StreamRequestHandler):
                def handle(self) -> None:
                    if not _same_user(self.request):
                        return
                    line = self.rfile.readline(MAX_REQUEST)
                    try:
                        message = json.loads(line)
                        reply = daemon.handle(message) if isinstance(message, dict) else {"error": "not an object"}
                    except ValueError:
                        reply = {"error": "not JSON"}
                    except Exception as exc:  # noqa: BLE001 - the client answers by itself
                        reply = {"error": " ".join(str(exc).split())[:200] or type(exc).__name__}
                    self.wfile.write(json.dumps(reply, ensure_ascii=True).encode() + b"\n")

            class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
                daemon_threads = True

            old = os.umask(0o177)
            try:
                self.server = Server(os.fspath(self.sock_path), Handler)
            finally:
                os.umask(old)
            self._sock_id = _file_id(self.sock_path)
            threading.Thread(target=self.warm, daemon=True).start()
            threading.Thread(target=self._watch, daemon=True).start()
            self.server.serve_forever(poll_interval=0.5)
        finally:
            if self.server is not None:
                self.server.server_close()
            if _file_id(self.sock_path) == getattr(self, "_sock_id", None):
                self.sock_path.unlink(missing_ok=True)
            if self._ars is not None:
                try:
                    self._ars.close()
                except Exception:  # noqa: BLE001
                    pass
            lock.close()
        return 0

    def _watch(self) -> None:
        while True:
            time.sleep(CHECK_EVERY)
            idle = time.monotonic() - self.last
            if idle > self.idle or not self._still_ours():
                self.stop()
                return

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()


def _host_of(ars) -> str | None:
    """This state directory's host id, for the table that names other hosts' memories."""
    try:
        return ars.identity.host
    except Exception:  # noqa: BLE001 - a label only
        return None


def _sweep(sock_dir: Path, mine: Path) -> None:
    """Remove the sockets and locks of daemons that are gone (killed, or a
    configuration nobody uses any more): nobody holds their lock."""
    for lock_path in sock_dir.glob("recall-*.lock"):
        if lock_path == mine.with_suffix(".lock"):
            continue
        try:
            with open(lock_path, "a") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                lock_path.with_suffix(".sock").unlink(missing_ok=True)
                lock_path.unlink(missing_ok=True)
        except OSError:
            continue  # held: that daemon is alive


def _same_user(conn: socket.socket) -> bool:
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return True  # the 0700 directory already keeps other users out
    try:
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()


def idle_seconds() -> float:
    try:
        value = float(os.environ.get(address.IDLE_ENV, DEFAULT_IDLE))
    except ValueError:
        return DEFAULT_IDLE
    return value if value >= 0 else DEFAULT_IDLE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tui.daemon.server")
    ap.add_argument("--state", required=True)
    ap.add_argument("--fingerprint", required=True)
    args = ap.parse_args(argv)
    os.umask(0o077)
    state = Path(args.state)
    if address.fingerprint() != args.fingerprint or not state.is_dir():
        return 0  # the code or settings changed since the client looked: its next call starts the right one
    return Daemon(state, args.fingerprint, idle_seconds()).serve()


if __name__ == "__main__":
    sys.exit(main())
