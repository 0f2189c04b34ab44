"""Commands that run another command (env, command, xargs, timeout, npx...):
the command they run is checked as if it ran alone."""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM, sub_command, word_like


def c_env(cmd, name, ctx):
    args = list(cmd.args)
    while args:
        v = args[0].value
        if v is None:
            break
        if v in ("-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"):
            args.pop(0)
        elif v in ("-u", "--unset"):
            args = args[2:]
        elif v.startswith(("--unset=", "-u")):
            args.pop(0)
        elif v in ("-S", "--split-string") or v.startswith(("-S", "--split-string=", "-C", "--chdir")):
            ctx.hold("env-split", HIGH, f"env {v.split('=')[0]} runs a command the gate would have to re-read", cmd)
            return
        elif v == "--":
            args.pop(0)
            break
        elif "=" in v and not v.startswith("="):
            key, _eq, val = v.partition("=")
            ctx.assignment(key, word_like(args[0], val), cmd)
            args.pop(0)
        else:
            break
    if args:
        ctx.run(sub_command(cmd, args))


def c_wrapper(takes: str = "", long_takes: tuple[str, ...] = (), positional_before: int = 0):
    """nice/nohup/timeout/stdbuf/time: options, ``positional_before`` words
    (timeout's duration), then the command they run."""

    def check(cmd, name, ctx):
        args = list(cmd.args)
        while args and args[0].value is not None and args[0].value.startswith("-") and args[0].value != "-":
            v = args.pop(0).value
            if v == "--":
                break
            if v.startswith("--"):
                if "=" not in v and v in long_takes and args:
                    args.pop(0)
            elif len(v) == 2 and v[1] in takes and args:
                args.pop(0)
        args = args[positional_before:]
        if args:
            ctx.run(sub_command(cmd, args))

    return check


def c_command(cmd, name, ctx):
    args = list(cmd.args)
    lookup = False
    while args and args[0].value is not None and args[0].value.startswith("-"):
        v = args.pop(0).value
        if "v" in v or "V" in v:
            lookup = True
        if v == "--":
            break
    if lookup or not args:
        return
    ctx.run(sub_command(cmd, args))


def c_xargs(cmd, name, ctx):
    args = list(cmd.args)
    replace = None
    while args and args[0].value is not None and args[0].value.startswith("-"):
        v = args.pop(0).value
        if v == "--":
            break
        key, eq, val = v.partition("=")
        if key in ("-I", "--replace", "-i") or (v.startswith("-I") and len(v) > 2):
            if key == "-I" and not eq and len(v) == 2:
                replace = args.pop(0).value if args else None
            else:
                replace = val if eq else (v[2:] or "{}")
        elif key in ("-a", "--arg-file"):
            f = word_like(cmd.name, val) if eq else (args.pop(0) if args else None)
            if f is not None:
                ctx.read(f, cmd)
        elif key in ("-n", "-L", "-P", "-s", "-d", "-E", "--max-args", "--max-lines", "--max-procs",
                     "--max-chars", "--delimiter", "--eof", "-e", "-l") and not eq and len(v) == 2 and args:
            args.pop(0)
        elif key == "-p" or key == "--interactive":
            continue
    if not args:
        return  # echo
    # what comes on standard input becomes arguments the gate cannot see
    unknown = type(cmd.name)(None, "<input>")
    if replace:
        args = [unknown if (w.value is not None and replace in w.value) else w for w in args]
        ctx.run(sub_command(cmd, args))
    else:
        ctx.run(sub_command(cmd, args + [unknown]))


def c_runner(prefix_words: int = 1):
    """uv run / poetry run / bundle exec / npm exec: skip the words naming the
    runner and its options, then check what it runs."""

    def check(cmd, name, ctx):
        args = list(cmd.args[prefix_words - 1:]) if prefix_words > 1 else list(cmd.args)
        while args and args[0].value is not None and args[0].value.startswith("-"):
            v = args.pop(0).value
            if v == "--":
                break
            if v in ("-c", "--call"):
                ctx.hold("shell-c", HIGH, f"{name} {v} runs a shell string", cmd)
                return
            if v in ("--with", "-w", "--python", "-p", "--package", "--from", "--env-file", "--directory",
                     "--project", "--group", "--extra", "--index", "--index-url", "--isolated", "--workspace",
                     "--filter", "-F", "--gemfile") and "=" not in v and args:
                if v in ("--env-file",):
                    ctx.read(args[0], cmd)
                args.pop(0)
        if not args:
            ctx.hold("unknown-command", MEDIUM, f"{name} with nothing to run", cmd)
            return
        ctx.run(sub_command(cmd, args))

    return check


def c_npx(cmd, name, ctx):
    c_runner()(cmd, name, ctx)
