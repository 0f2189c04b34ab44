"""The CPU a forked checker has used, read while it runs.

A long Bash line is checked in a forked child (core/inbox/gate/check.py) that is killed when
its budget is spent. The budget is CPU seconds, as in-process checks count them
(core/inbox/cpu_clock.py): on a machine whose CPUs busy agents share, wall time
also counts the waiting. Linux gives a running process's CPU in ``/proc/<pid>/stat``; where
there is no /proc, wall time is all there is, and the budget is counted on it (the old rule).
"""

from __future__ import annotations

import os
import time

WALL_LIMIT = 10.0  # seconds: past this a check is held whatever its CPU (the agent waits for the hook)
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ChildClock:
    """CPU seconds a child process has used since it was forked."""

    poll = 0.02  # seconds between looks at the child's CPU (one small /proc read)

    def __init__(self, pid: int):
        self.path = f"/proc/{pid}/stat"
        self.started = time.monotonic()
        self.proc = os.path.exists(self.path)

    def spent(self) -> float:
        if not self.proc:
            return time.monotonic() - self.started
        try:
            with open(self.path, "rb") as fh:
                stat = fh.read()
        except OSError:  # gone (exited): its answer is in the pipe, or never comes
            return 0.0
        # fields after the command name (which may hold spaces and parentheses): utime, stime are 14, 15
        fields = stat[stat.rfind(b")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
