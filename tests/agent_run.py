"""What the end-to-end tests with the real agents (Claude Code, Hermes, OpenClaw)
share: finding the installed agent (skipped locally, failing under ``CI=true``,
which installs it), ``ars`` run as a person or an agent would (no terminal, the
passphrase on a pipe), and one run of the agent as a process whose held call
is waited for in the inbox, with its output attached to any failed assertion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import pytest

from conftest import env_without_ars, passphrase_pipe

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "ars"
PASSPHRASE = "correct horse battery staple"


def agent_path(variable: str, name: str) -> Path | None:
    """``$<variable>``, else ``.agents/bin/<name>`` (where scripts/agents/install-* put it), when executable."""
    explicit = os.environ.get(variable)
    path = Path(explicit) if explicit else ROOT / ".agents" / "bin" / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def installed(path: Path | None, installer: Path, says: str, name: str, env: dict | None = None) -> Path:
    """``path`` when it runs and its ``--version`` says ``says``; else skip (fail under CI=true)."""
    problem = None
    if path is None:
        problem = f"{name} is not installed (run {installer.relative_to(ROOT)})"
    else:
        try:
            r = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL, env=env)
            if r.returncode != 0 or says not in r.stdout:
                problem = f"{path} --version did not say {says}: {(r.stdout + r.stderr).strip()[:200]}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            problem = f"{path} does not run: {exc}"
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)  # CI installs it (.ci/run): missing there is a defect, not a skip
        pytest.skip(problem)
    return path


def ars(*args: str, passphrase: str | None = None, env: dict | None = None, timeout: float = 60,
        drop: tuple[str, ...] = ("ARS_",)) -> subprocess.CompletedProcess:
    """``ars ARGS`` with no terminal at all (stdin /dev/null, a new session: no tty to ask
    on); ``passphrase`` on a pipe given as ``--passphrase-fd N``."""
    base = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tui.cli.main"]
    with passphrase_pipe(passphrase) as pp:
        return subprocess.run(base + list(args) + pp.args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, start_new_session=True, pass_fds=pp.fds, cwd=ROOT,
                              env=env or env_without_ars(drop))


def ok(r: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert r.returncode == 0, f"{' '.join(map(str, r.args))} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


def tail(p: Path, n: int = 6000) -> str:
    return p.read_text(errors="replace")[-n:] if p.exists() else "(none)"


class AgentRun:
    """One run of an agent (``proc``, in its own session) beside a state directory.
    Subclasses set ``name``, ``source`` (its requests' source prefix), the waits and
    ``state``, ``out_path``, ``err_path``, and say more in ``diagnostics``."""

    name = "the agent"
    source = ""
    pending_wait = 90.0  # s: the agent's start, its first model turn, the gate
    exit_wait = 90.0     # s: after a decision, the command and the model's last turn
    poll = 0.25
    ars: Callable[..., subprocess.CompletedProcess] = staticmethod(ars)

    state: Path
    out_path: Path
    err_path: Path
    proc: subprocess.Popen | None = None

    def __init__(self, tmp: Path, out_name: str):
        """A project holding ``victim/nested/keep.txt`` (what the model asks to ``rm -rf``), a state
        directory, a home, and where the agent's output goes."""
        self.project = tmp / "project"
        self.victim = self.project / "victim"
        (self.victim / "nested").mkdir(parents=True)
        (self.victim / "nested" / "keep.txt").write_text("precious\n")
        self.state = tmp / "state"
        self.home = tmp / "home"
        self.out_path, self.err_path = tmp / f"{out_name}.out", tmp / f"{out_name}.err"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 15)  # its own session: the agent and the hook it waits on
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(10)

    def pending(self) -> list[dict]:
        return json.loads(ok(self.ars("inbox", "list", "--status", "pending", "--json",
                                      "--state", str(self.state))).stdout)

    def wait_for_held(self) -> dict:
        """The held call as it appears in ``ars inbox list --status pending``."""
        deadline = time.monotonic() + self.pending_wait
        while time.monotonic() < deadline:
            held = [r for r in self.pending() if r["source"].startswith(self.source)]
            if held:
                return held[0]
            assert self.proc.poll() is None, f"{self.name} exited ({self.proc.returncode}) before its call was held"
            time.sleep(self.poll)
        raise AssertionError(f"no held request in the inbox after {self.pending_wait:g} s")

    def wait_exit_code(self) -> str:
        """The agent's exit (which must be 0) and its stdout."""
        try:
            rc = self.proc.wait(self.exit_wait)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} still running {self.exit_wait:g} s after the decision") from None
        assert rc == 0, f"{self.name} exited {rc}"
        return self.out_path.read_text(errors="replace")

    def inbox_dump(self) -> str:
        try:
            return self.ars("inbox", "list", "--json", "--state", str(self.state), timeout=30).stdout[-4000:]
        except Exception as exc:  # noqa: BLE001 - diagnostics must not hide the failure
            return f"(cannot list: {exc})"

    def diagnostics(self) -> str:
        return (f"\n--- {self.name} exit code: {None if self.proc is None else self.proc.poll()}"
                f"\n--- stdout:\n{tail(self.out_path)}\n--- stderr:\n{tail(self.err_path)}"
                f"\n--- inbox:\n{self.inbox_dump()}")

    @contextmanager
    def explained(self):
        """An assertion that fails carries the agent's output, the stub's log and the inbox."""
        try:
            yield self
        except AssertionError as exc:
            raise AssertionError(f"{exc}{self.diagnostics()}") from None
