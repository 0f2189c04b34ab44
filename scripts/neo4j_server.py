"""A real Neo4j 5.26 server for tests, benchmarks and users without Docker.

Wraps ``scripts/neo4j/run`` (embedded Neo4j + Bolt on 127.0.0.1, no auth, no TLS)::

    with Neo4jServer() as server:        # fresh temp data dir, free port
        uri = server.uri                 # bolt://127.0.0.1:<port>  (server.routing_uri: neo4j://...)
        server.kill()                    # simulate a crash / outage
        server.restart()                 # same port, same data: clients reconnect

Foreground, for users: ``python scripts/neo4j_server.py [--port N] [--data DIR]``.
Stdlib only. The first start downloads the jars with Maven (see scripts/neo4j/run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

RUN = Path(__file__).resolve().parent / "neo4j" / "run"
READY = "NEO4J READY "


class Neo4jServer:
    """One Neo4j server process. ``stop()``/``kill()`` keep the data; ``restart()``
    brings it back on the same port and data dir. A data dir this object created
    (``data_dir=None``) is deleted by ``close()``, ``__exit__`` or at interpreter exit."""

    def __init__(self, data_dir: Path | None = None, port: int | None = None):
        self._owns_dir = data_dir is None
        self.data_dir = Path(tempfile.mkdtemp(prefix="ars-neo4j-") if data_dir is None else data_dir).absolute()
        self._port = port or None  # None/0: the launcher picks one; kept for restarts
        self.proc: subprocess.Popen | None = None  # None while not running
        # Launcher stderr and Neo4j's console output; Neo4j's own logs are in data_dir/logs.
        self.log_path = self.data_dir / "launcher.log"
        # Safety net: never leave a java process or a temp dir behind, even if the
        # caller forgets stop()/close() (e.g. a test session that errors out).
        self._procs: list[subprocess.Popen] = []
        self._finalizer = weakref.finalize(self, _cleanup, self._procs, self.data_dir if self._owns_dir else None)

    # -- properties -----------------------------------------------------------------

    @property
    def port(self) -> int | None:
        """The Bolt port; None only before the first start when none was given."""
        return self._port

    @property
    def uri(self) -> str | None:
        """``bolt://127.0.0.1:<port>``; stays the same across stop/kill/restart."""
        return None if self._port is None else f"bolt://127.0.0.1:{self._port}"

    @property
    def routing_uri(self) -> str | None:
        """``neo4j://127.0.0.1:<port>``: the same server through a routing driver
        (it answers the routing table with its own address, as a cluster member would)."""
        return None if self._port is None else f"neo4j://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- lifecycle ------------------------------------------------------------------

    def start(self, timeout: float = 120, retry: bool = True) -> str:
        """Start the server and wait until Bolt accepts connections; return the URI.

        ``timeout`` covers the JVM start only: the one-time jar download runs first,
        without a limit. Raises RuntimeError (with the last log lines) if the server
        exits, or is not ready in time twice (``retry``: a hung start is dumped and tried again)."""
        if self.running:
            return self.uri  # type: ignore[return-value]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            fetch = subprocess.run([str(RUN), "--fetch-only"], stdout=log, stderr=log)
        if fetch.returncode != 0:
            raise RuntimeError(f"fetching the Neo4j jars failed:\n{self._log_tail()}")

        cmd = [str(RUN), "--data", str(self.data_dir)]
        if self._port:
            cmd += ["--port", str(self._port)]
        with open(self.log_path, "ab") as log:
            log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} start {cmd}\n".encode())
            log.flush()
            # Own process group (new session): signals from the caller's terminal don't
            # reach it, and stop()/kill() can signal the whole group (mvn during a fetch).
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        self.proc = proc
        self._procs.append(proc)

        ready = threading.Event()
        found: list[str] = []

        def pump() -> None:
            # Read the READY line, then keep draining stdout into the log so a stray
            # write (e.g. a JVM warning) can never block the server on a full pipe.
            with proc.stdout, open(self.log_path, "ab") as log:  # type: ignore[union-attr]
                for raw in proc.stdout:  # type: ignore[union-attr]
                    line = raw.decode(errors="replace")
                    if not found and line.startswith(READY):
                        found.append(line[len(READY) :].strip())
                        ready.set()
                    else:
                        log.write(raw)
                        log.flush()

        threading.Thread(target=pump, name="neo4j-stdout", daemon=True).start()

        deadline = time.monotonic() + timeout
        while not ready.wait(0.1):
            if proc.poll() is not None:
                self.proc = None
                self._forget(proc)
                raise RuntimeError(f"Neo4j exited with code {proc.returncode} before it was ready:\n{self._log_tail()}")
            if time.monotonic() > deadline:
                # A start that printed nothing in `timeout` s (once in a CI run beside two busy
                # loops, on the fourth restart of one data dir) is a hang, not a slow start: the
                # JVM's thread dump (SIGQUIT prints it to stdout, which the pump logs) says where,
                # and one fresh start is tried before the test is failed.
                _signal_group(proc, signal.SIGQUIT)
                time.sleep(2.0)
                self.kill()
                if retry:
                    with open(self.log_path, "ab") as log:
                        log.write(f"\n--- not ready after {timeout:.0f} s: thread dump above; one more start\n".encode())
                    return self.start(timeout, retry=False)
                raise RuntimeError(f"Neo4j not ready after {timeout:.0f} s, twice:\n{self._log_tail(200)}")
        self._port = int(found[0].rsplit(":", 1)[1])
        return self.uri  # type: ignore[return-value]

    def stop(self, timeout: float = 30) -> None:
        """Clean shutdown (SIGTERM); SIGKILL if still alive after ``timeout`` s.
        Keeps the data dir, so ``restart()`` can follow."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        self._forget(proc)

    def kill(self) -> None:
        """SIGKILL at once, as in a crash or outage. Neo4j recovers on the next start."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
        self._forget(proc)

    def restart(self, timeout: float = 120) -> str:
        """Stop if running, then start on the same port and data dir; return the URI."""
        self.stop()
        return self.start(timeout)

    def close(self) -> None:
        """Final stop: stop the server and delete the data dir if this object made it."""
        self.stop()
        self._finalizer()

    def __enter__(self) -> Neo4jServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers --------------------------------------------------------------------

    def _forget(self, proc: subprocess.Popen) -> None:
        # (stdout is closed by the pump thread when it reaches EOF.)
        if proc in self._procs:
            self._procs.remove(proc)

    def _log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # pid == pgid thanks to start_new_session
    except ProcessLookupError:
        pass


def _cleanup(procs: list[subprocess.Popen], temp_dir: Path | None) -> None:
    """Kill leftover servers and remove an owned temp dir (close() or at exit)."""
    for proc in list(procs):
        if proc.poll() is None:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
    procs.clear()
    if temp_dir is not None:
        shutil.rmtree(temp_dir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="Run a Neo4j 5.26 server (Bolt, no auth) until Ctrl-C.")
    ap.add_argument("--port", type=int, default=7687, help="Bolt port (0: any free port; default 7687)")
    ap.add_argument("--data", type=Path, help="data dir to keep between runs (default: temp dir, deleted)")
    args = ap.parse_args()

    # SIGTERM (e.g. from a supervisor) stops cleanly, like Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = Neo4jServer(args.data, args.port)
    try:
        t0 = time.monotonic()
        uri = server.start()
        print(f"Neo4j ready at {uri} (no auth) in {time.monotonic() - t0:.1f} s; data: {server.data_dir}")
        print(f"  e.g. export ARS_NEO4J_URI={uri}   Ctrl-C to stop.", flush=True)
        while server.running:
            time.sleep(1)
        print(f"Neo4j exited unexpectedly; see {server.log_path}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        pass
    finally:
        print("stopping Neo4j...", file=sys.stderr)
        server.close()


if __name__ == "__main__":
    main()
