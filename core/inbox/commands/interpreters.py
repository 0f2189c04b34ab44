"""Interpreters and shells: a script file passes like the project's code; a
program on the command line (``-c``, ``-e``) or on standard input is held."""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM, sub_command, word_like
from core.inbox.commands.wrappers import c_runner


def fed_text(cmd) -> str:
    f = cmd.stdin
    if f is None:
        return ""
    if f.kind == "pipe":
        return f" from the pipe ({f.by})" if f.by else " from a pipe"
    return f" from a {f.kind.replace('here', 'here-')}"


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "csh", "tcsh", "rbash"})


def c_shell(cmd, name, ctx):
    if name == "busybox":
        ctx.hold("shell-c", HIGH, "busybox runs any of its applets", cmd)
        return
    args = list(cmd.args)
    script = None
    while args:
        v = args[0].value
        if v is None:
            break
        if v.startswith(("-", "+")) and len(v) > 1 and v != "--":
            args.pop(0)
            if v in ("-o", "+o", "-O", "+O") and args:
                args.pop(0)
                continue
            if v in ("--rcfile", "--init-file"):
                if args:
                    ctx.read(args.pop(0), cmd)
                continue
            if v.startswith("--"):
                if v in ("--command", "--init-command"):
                    ctx.hold("shell-c", HIGH, f"{name} {v} runs a command string", cmd)
                    return
                continue
            letters = v[1:]
            if "c" in letters or (name == "fish" and "C" in letters):
                ctx.hold("shell-c", HIGH, f"{name} -c runs a command string the gate cannot read as commands", cmd)
                return
            if "s" in letters or "i" in letters:
                ctx.hold("pipe-to-shell", HIGH, f"{name} -{'s' if 's' in letters else 'i'} reads its commands from "
                                                f"standard input{fed_text(cmd)}", cmd)
                return
            continue
        if v == "--":
            args.pop(0)
        break
    if args:
        script = args[0]
    if script is None:
        if any(w.value in ("--version", "--help") for w in cmd.args):
            return
        ctx.hold("pipe-to-shell", HIGH, f"{name} reads its commands from standard input{fed_text(cmd)}", cmd)
        return
    script_file(cmd, name, script, ctx)
    ctx.net(args[1:], cmd)


def script_file(cmd, name, script, ctx):
    """An interpreter running a script file: the file must be known and not sensitive."""
    if script.value is None:
        ctx.hold("dynamic-script", HIGH, f"{name} runs a script whose name is only known when it runs "
                                         f"({script.text[:60]})", cmd)
        return
    if script.value in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        ctx.hold("pipe-to-shell", HIGH, f"{name} reads its program from standard input{fed_text(cmd)}", cmd)
        return
    ctx.read(script, cmd)
    ctx.runs_fetched(script, cmd, name)


PYTHON_HELD_MODULES = {"timeit": "runs the statement it is given", "code": "an interactive interpreter",
                       "asyncio": "an interactive interpreter", "pdb": "a debugger that runs what it is given",
                       "zipfile": "extracts archives anywhere", "tarfile": "extracts archives anywhere",
                       "webbrowser": "opens URLs", "idlelib": "an IDE", "runpy": "runs code by name",
                       "trace": "runs code it is given", "twine": "publishes packages", "smtplib": "sends mail",
                       "ensurepip": "installs pip into the interpreter", "pip": ""}


def c_python(cmd, name, ctx):
    args = list(cmd.args)
    while args:
        v = args[0].value
        if v is None:
            break
        if v == "-" or not v.startswith("-"):
            break
        args.pop(0)
        if v == "--":
            break
        if v.startswith("--"):
            if v in ("--version", "--help"):
                return
            if v.startswith("--check-hash-based-pycs") and "=" not in v and args:
                args.pop(0)
            continue
        letters = v[1:]
        for k, ch in enumerate(letters):
            if ch == "c":
                ctx.hold("interpreter-c", HIGH, f"{name} -c runs the program given on the command line", cmd)
                return
            if ch in "WX":
                if k + 1 == len(letters) and args:
                    args.pop(0)
                break
            if ch == "m":
                mod = letters[k + 1:] or (args.pop(0).value if args else None)
                return _python_module(cmd, name, mod, args, ctx)
            if ch in "Vh":
                return
    if not args:
        ctx.hold("interpreter-stdin", HIGH, f"{name} with no script reads its program from standard input"
                                            f"{fed_text(cmd)}", cmd)
        return
    script = args[0]
    script_file(cmd, name, script, ctx)
    if script.value is not None and script.value.rsplit("/", 1)[-1] == "manage.py" and len(args) > 1:
        sub = args[1].value
        if sub in ("flush", "reset_db", "dbshell", "shell", "sqlflush", "reset_schema", "drop_test_database"):
            ctx.hold("django-" + str(sub), HIGH, f"manage.py {sub} {'empties the database' if sub in ('flush', 'reset_db', 'reset_schema', 'drop_test_database') else 'runs code or SQL it is given'}", cmd)
    ctx.net(args[1:], cmd)


def _python_module(cmd, name, mod, args, ctx):
    if mod is None:
        ctx.hold("dynamic-command", HIGH, f"{name} -m with a module only known when it runs", cmd)
        return
    top = mod.split(".")[0]
    if mod == "pip" or top == "pip":
        return ctx.run(sub_command(cmd, [word_like(cmd.name, "pip")] + args))
    if top in PYTHON_HELD_MODULES and PYTHON_HELD_MODULES[top]:
        if top == "twine" and args and args[0].value == "check":
            return
        ctx.hold(f"python-m-{top}", HIGH, f"{name} -m {mod} {PYTHON_HELD_MODULES[top]}", cmd)
        return
    if top in ("black", "isort", "ruff", "autopep8", "yapf"):
        return ctx.run(sub_command(cmd, [word_like(cmd.name, top)] + args))
    ctx.in_project(cmd)
    ctx.net(args, cmd)


def c_interpreter(eval_flags: str, eval_long: tuple[str, ...] = (), takes: str = "", long_takes: tuple[str, ...] = (),
                  no_script_ok: tuple[str, ...] = ("--version", "-v", "--help", "-h", "-V"),
                  script_subcommands: tuple[str, ...] = ()):
    """node, perl, ruby, php, lua, Rscript...: a script file, never a program
    on the command line (``eval_flags``) or on standard input."""

    def check(cmd, name, ctx):
        args = list(cmd.args)
        if args and args[0].value in script_subcommands:
            args.pop(0)
        while args:
            v = args[0].value
            if v is None or v == "-" or not v.startswith("-"):
                break
            args.pop(0)
            if v == "--":
                break
            if v in no_script_ok:
                return
            if v.startswith("--"):
                key = v.split("=", 1)[0]
                if key in eval_long:
                    ctx.hold("interpreter-c", HIGH, f"{name} {key} runs the program given on the command line", cmd)
                    return
                if key == "--test":
                    ctx.in_project(cmd)
                    return
                if "=" not in v and key in long_takes and args:
                    args.pop(0)
                continue
            letters = v[1:]
            for k, ch in enumerate(letters):
                if ch in eval_flags:
                    ctx.hold("interpreter-c", HIGH, f"{name} -{ch} runs the program given on the command line", cmd)
                    return
                if ch in takes:
                    if k + 1 == len(letters) and args:
                        args.pop(0)
                    break
                if name == "perl" and ch == "i":
                    ctx.in_project(cmd, "perl -i edits files in place")
                    break
        if not args:
            ctx.hold("interpreter-stdin", HIGH, f"{name} with no script reads its program from standard input"
                                                f"{fed_text(cmd)}", cmd)
            return
        script_file(cmd, name, args[0], ctx)
        if name == "php" and args[0].value == "artisan" and len(args) > 1:
            sub = args[1].value or ""
            if sub in ("migrate:fresh", "migrate:reset", "migrate:refresh", "migrate:rollback", "db:wipe", "tinker",
                       "db:seed"):
                ctx.hold("artisan-" + sub, HIGH, f"artisan {sub} drops data or runs code it is given", cmd)
        ctx.net(args[1:], cmd)

    return check


def c_deno(cmd, name, ctx):
    pos = [w for w in cmd.args if w.value is None or not w.value.startswith("-")]
    sub = pos[0].value if pos else None
    if sub in ("eval", "repl", "jupyter", "upgrade", "install", "uninstall", "publish", "serve"):
        ctx.hold("interpreter-c" if sub in ("eval", "repl") else f"deno-{sub}", HIGH,
                 f"deno {sub} {'runs code given on the command line' if sub in ('eval', 'repl') else 'is not on the allow-list'}",
                 cmd)
        return
    if sub in ("test", "bench", "check", "fmt", "lint", "task", "compile", "info", "doc", "cache", "init", "types",
               "coverage", "add", "remove", "outdated"):
        ctx.in_project(cmd)
        ctx.net(cmd.args, cmd)
        return
    c_interpreter("", ("--eval",), "", ("--config", "--import-map"), script_subcommands=("run",))(cmd, name, ctx)


def c_pipx(cmd, name, ctx):
    pos = [w for w in cmd.args if w.value is None or not w.value.startswith("-")]
    sub = pos[0].value if pos else None
    if sub == "run":
        return c_runner(2)(cmd, name, ctx)
    if sub in ("list", "environment", "--version"):
        return
    ctx.hold("global-install", MEDIUM, f"pipx {sub or ''} installs or removes programs outside the project", cmd)


def c_source(cmd, name, ctx):
    if not cmd.args:
        ctx.hold("unknown-path", MEDIUM, f"{name} without a file", cmd)
        return
    w = cmd.args[0]
    if w.value is None:
        ctx.hold("dynamic-script", HIGH, f"{name} of a file only known when it runs ({w.text[:60]})", cmd)
        return
    if w.value in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        ctx.hold("pipe-to-shell", HIGH, f"{name} runs commands from standard input{fed_text(cmd)}", cmd)
        return
    ctx.read(w, cmd)
    ctx.runs_fetched(w, cmd, name)
    ctx.inside(w, cmd, "sources (runs) a file outside the project")
