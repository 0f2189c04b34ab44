"""The passphrase and the unlocked key against another process of the same user
(tests/sameuser.py): ``--passphrase-fd`` is read at once and closed, the deciding
process is non-dumpable (its /proc entries are root's: no /proc/PID/fd/N to drain, no
/proc/PID/mem to read), while a process of the same user that did not ask (the loop's
own shell step) stays readable: the kernel here would allow it otherwise. And
`ars doctor` says when the kernel lets any process of the user ptrace another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import sameuser
from conftest import passphrase_socket
from core.api import ARS
from sameuser import agent_home  # noqa: F401 - the fixture
from core.config import Settings

ROOT = Path(__file__).resolve().parents[3]
PASS = "correct horse battery staple"

PROBE = r"""
import json, os, sys
pid, fd = sys.argv[1], sys.argv[2]
out = {}
for what, path in (("fd_dir", f"/proc/{pid}/fd"), ("the_fd", f"/proc/{pid}/fd/{fd}"), ("mem", f"/proc/{pid}/mem"),
                   ("environ", f"/proc/{pid}/environ")):
    try:
        if what == "fd_dir":
            os.listdir(path)
        else:
            with open(path, "rb") as fh:
                fh.read(1) if what != "mem" else None
        out[what] = "read"
    except FileNotFoundError:
        out[what] = "absent"
    except PermissionError:
        out[what] = "refused"
    except OSError as exc:
        out[what] = f"error {exc.errno}"
print(json.dumps(out))
"""


def _until(cond, what: str, limit: float = 60.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")


def _probe(home: Path, pid: int, fd: int) -> dict:
    """What "the agent" (same user, no root) gets from another process's /proc entries."""
    p = subprocess.run(sameuser.prefix() + [sys.executable, "-c", PROBE, str(pid), str(fd)], capture_output=True,
                       text=True, env=sameuser.env(home), timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _children(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return out


def test_the_passphrase_fd_is_read_at_once_and_closed_and_the_decider_is_not_dumpable(agent_home):
    from loophelp import engine, goal

    home = agent_home
    state = home / "state"
    marker, release = home / "step-started", home / "release"
    with ARS(Settings(state_dir=state)) as a:
        a.supervisor_init(PASS.encode())
    eng = engine(state)
    g = goal([{"action": "a slow step", "tool": "shell", "needs_approval": True,
               "args": {"cmd": f"touch {marker}; while [ ! -e {release} ]; do sleep 0.05; done"}}])
    loop = eng.run(eng.create(g).loop_id)
    eng.memory.close()
    rid = f"loop:{loop.loop_id}:{loop.pending_approval.request_id}"
    sameuser.give(home)
    fd = passphrase_socket(PASS, after=b"what comes after the first line stays unread by anyone\n")
    # the supervisor's script: `ars inbox approve ID --passphrase-fd N` (the loop's step runs in that process)
    proc = subprocess.Popen(sameuser.prefix() + [sys.executable, "-m", "tui.entry", "inbox", "approve", rid,
                                                 "--state", str(state), "--passphrase-fd", str(fd)],
                            pass_fds=(fd,), env=sameuser.env(home), cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(fd)
    try:
        _until(marker.exists, "the approved step to start (the key was unlocked before it)")
        assert not os.path.exists(f"/proc/{proc.pid}/fd/{fd}")  # read and closed long before
        assert os.stat(f"/proc/{proc.pid}/fd").st_uid == 0  # non-dumpable: its /proc entries are root's
        seen = _probe(home, proc.pid, fd)
        assert seen == {"fd_dir": "refused", "the_fd": "refused", "mem": "refused", "environ": "refused"}, seen
        shell = next(c for c in _children(proc.pid) if Path(f"/proc/{c}/cmdline").read_bytes().startswith(b"/bin/sh"))
        # the step's shell: same user, exec'd, dumpable as any process is
        control = _probe(home, shell, 0)
        assert control["fd_dir"] == "read" and control["mem"] == "read", control
    finally:
        release.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "approved" in out


def test_a_pipe_is_refused_in_one_line_and_nothing_is_decided(tmp_path):
    """A pipe can be drained through /proc by any process of the user before ars reads it."""
    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        a.supervisor_init(PASS.encode())
        rid = a.request_approval("claude-code:s1", "rm", "rm -rf build", binds="Bash").id
    r, w = os.pipe()
    os.write(w, PASS.encode() + b"\n")
    os.close(w)
    p = subprocess.run([sys.executable, "-m", "tui.entry", "inbox", "approve", rid, "--state", str(tmp_path / "state"),
                        "--passphrase-fd", str(r)], pass_fds=(r,), capture_output=True, text=True, cwd=ROOT,
                       env=sameuser.env(tmp_path), stdin=subprocess.DEVNULL, timeout=60)
    os.close(r)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2 and len(lines) == 1 and "is a pipe" in lines[0] and "socket" in lines[0], p.stderr
    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        assert a.inbox_get(rid).status == "pending"


def test_an_empty_passphrase_fd_says_so_in_one_line(tmp_path):
    import socket

    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        a.supervisor_init(PASS.encode())
        rid = a.request_approval("claude-code:s1", "rm", "rm -rf build", binds="Bash").id
    a_end, b_end = socket.socketpair()
    b_end.close()  # drained by someone else: nothing left for ars
    r = a_end.detach()
    p = subprocess.run([sys.executable, "-m", "tui.entry", "inbox", "approve", rid, "--state", str(tmp_path / "state"),
                        "--passphrase-fd", str(r)], pass_fds=(r,), capture_output=True, text=True, cwd=ROOT,
                       env=sameuser.env(tmp_path), stdin=subprocess.DEVNULL, timeout=60)
    os.close(r)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2 and len(lines) == 1 and "gave no passphrase" in lines[0], p.stderr
    assert "another process" in lines[0]  # an empty pipe the supervisor wrote to: someone drained it
    with ARS(Settings(state_dir=tmp_path / "state")) as a:
        assert a.inbox_get(rid).status == "pending"


def test_doctor_warns_when_any_process_of_the_user_may_ptrace_another(tmp_path):
    from core.inbox.key_memory import YAMA, ptrace_warning

    scope = tmp_path / "ptrace_scope"
    scope.write_text("0\n")
    assert "ptrace_scope is 0" in ptrace_warning(str(scope))
    scope.write_text("1\n")
    assert ptrace_warning(str(scope)) == ""
    assert "no Yama" in ptrace_warning(str(tmp_path / "absent"))
    ARS(Settings(state_dir=tmp_path / "state")).close()
    p = subprocess.run([sys.executable, "-m", "tui.entry", "doctor", "--state", str(tmp_path / "state"), "--json"],
                       capture_output=True, text=True, cwd=ROOT, env=sameuser.env(tmp_path), timeout=120)
    assert p.returncode == 0, p.stderr
    warnings = json.loads(p.stdout)["warnings"]
    try:
        here = Path(YAMA).read_text().strip()
    except OSError:
        here = ""
    assert bool(warnings) == (here in ("", "0"))  # this host: no Yama here, so a warning
