"""Which shell commands the gate passes, and with which arguments.

An allow-list: a command not named here is held. Each entry says what the
command may touch: ``pure`` commands touch no file through their arguments
(echo, printf, true...); ``read`` commands read the files they are given
(cat, head, grep...), which must not be sensitive and must be known; writers
(cp, mv, rm, mkdir, tee, sed -i...) may write only inside the project; tools
(make, pytest, npm, cargo...) run the project's own code in a directory
inside the project, with their publishing, deleting and config-writing
subcommands held; interpreters run a script file, never a program given on the
command line or on standard input; network clients fetch public URLs and
never upload.

``check(cmd, ctx)`` looks at one :class:`core.inbox.shell.Command` and calls
``ctx.hold(rule, risk, reason, cmd)`` for each reason to hold it. ``ctx`` (the
gate's) resolves paths: ``read``, ``write``, ``in_project``, ``url``, ``net``.
"""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM
from core.inbox.commands.table import TABLE, check, normalize

__all__ = ["HIGH", "MEDIUM", "TABLE", "check", "normalize"]
