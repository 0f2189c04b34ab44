"""Built-ins and everyday commands with a twist: a form that changes the shell or
the system is held."""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM


def c_hash(cmd, name, ctx):
    if any(w.value is None or w.value.startswith("-p") for w in cmd.args):
        ctx.hold("shell-builtin", HIGH, "hash -p makes a command name run another program", cmd)


def c_set(cmd, name, ctx):
    for w in cmd.args:
        if w.value is None:
            continue
        if w.value in ("--",):
            break


def c_date(cmd, name, ctx):
    for w in cmd.args:
        if w.value is not None and (w.value.startswith(("-s", "--set")) or w.value in ("-f", "--file")):
            ctx.hold("date-set", MEDIUM, "date -s sets the clock", cmd)


def c_hostname(cmd, name, ctx):
    pos = [w for w in cmd.args if w.value is None or not w.value.startswith("-")]
    if pos:
        ctx.hold("hostname-set", MEDIUM, "hostname NAME renames the machine", cmd)


def c_ps(cmd, name, ctx):
    pass
