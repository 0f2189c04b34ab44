"""The clock a gate check's deadline is on, for both sides of the gate (the tool-call
checks in ``core/inbox/gate`` and the shell parser in ``core/inbox/shell``).

It is CPU seconds of the checking thread, not wall time. The deadline is there against
input that makes a parse superlinear, which is CPU; on a machine whose CPUs are shared with
busy agents, wall time also counts the waiting, and a harmless megabyte command was held
"out of time" at load 9 on 2 CPUs. A forked checker's CPU is read from /proc
(``core/inbox/gate/child_clock.py``). Stdlib only: every hook call loads it.
"""

from __future__ import annotations

import time

CLOCK = time.thread_time
