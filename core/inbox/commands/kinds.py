"""Kinds of checker the table is built from: pure commands, readers of the files
they are given, project tools, commands with a table of subcommands, and held ones."""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM, opts, sub_command, word_like


def pure(cmd, name, ctx):
    """Touches no file through its arguments."""


def reads(takes: str = "", long_takes: tuple[str, ...] = (), default_here: bool = False, recursive: str = "",
          first_not_path: bool = False, writes_opts: tuple[str, ...] = ()):
    """Its positionals are files it reads (``default_here``: none means '.');
    ``recursive``: the options that make it read whole trees; ``writes_opts``:
    options whose value is a file it writes."""

    def check(cmd, name, ctx):
        options, pos = opts(cmd.args, takes, long_takes)
        rec = bool(recursive) and any(o in recursive.split() for o, _v in options)
        for o, v in options:
            if o in writes_opts and v is not None:
                ctx.write(v, cmd)
        if first_not_path and pos:
            pos = pos[1:]
        if not pos and default_here:
            pos = [word_like(cmd.name, ".")]
        for w in pos:
            ctx.read(w, cmd, recursive=rec)
        ctx.net([v for _o, v in options if v is not None], cmd)

    return check


def tool(check_args=None, cwd: bool = True):
    """Runs the project's own tooling: in a directory inside the project
    (it writes there), with ``check_args`` holding its dangerous forms."""

    def check(cmd, name, ctx):
        if cwd:
            ctx.in_project(cmd)
        if check_args is not None:
            check_args(cmd, name, ctx)
        ctx.net(cmd.args, cmd)

    return check


def subcommands(allowed: set[str] | None = None, held: dict[str, str] | None = None, takes: str = "",
                long_takes: tuple[str, ...] = (), default: str | None = None, cwd: bool = True,
                global_held: dict[str, str] | None = None, runners: tuple[str, ...] = ()):
    """A tool whose first positional is a subcommand: ``allowed`` ones pass,
    ``held`` ones are held with their reason, others are held as unknown."""

    def check(cmd, name, ctx):
        options, pos = opts(cmd.args, takes, long_takes, stop_at_positional=True)
        for o, _v in options:
            if global_held and o in global_held:
                ctx.hold(f"{name}-{o.lstrip('-')}", HIGH, f"{name} {o}: {global_held[o]}", cmd)
        sub = pos[0].value if pos else default
        if sub is None:
            if not pos and not options:
                ctx.hold("unknown-command", MEDIUM, f"{name} with no subcommand", cmd)
            elif pos:
                ctx.hold("dynamic-command", HIGH, f"{name}'s subcommand is only known when it runs", cmd)
            elif all(o in ("--version", "-v", "-V", "--help", "-h") for o, _v in options):
                return
            else:
                ctx.hold("unknown-command", MEDIUM, f"{name} with no subcommand", cmd)
            return
        if held and sub in held:
            ctx.hold(f"{name}-{sub}", HIGH, f"{name} {sub}: {held[sub]}", cmd)
            return
        if sub in runners:  # poetry run X, bundle exec X: X is checked as itself
            if cwd:
                ctx.in_project(cmd)
            rest = cmd.args[cmd.args.index(pos[0]) + 1:]
            if not rest:
                ctx.hold("unknown-command", MEDIUM, f"{name} {sub} with nothing to run", cmd)
                return
            ctx.run(sub_command(cmd, rest))
            return
        if allowed is not None and sub not in allowed:
            ctx.hold("unknown-command", MEDIUM, f"{name} {sub} is not on the gate's allow-list", cmd)
            return
        if cwd:
            ctx.in_project(cmd)
        ctx.net(cmd.args, cmd)

    return check


def held(rule: str, reason: str, risk: str = HIGH):
    def check(cmd, name, ctx):
        ctx.hold(rule, risk, reason.format(name=name), cmd)

    return check
