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

import re

HIGH, MEDIUM = "high", "medium"


# -- option parsing ------------------------------------------------------------------
def opts(args, takes: str = "", long_takes: tuple[str, ...] = (), stop_at_positional: bool = False):
    """(options, positionals): options as (name, value Word or None), e.g.
    ("-n", Word("5")) or ("--force", None). ``takes``: short options with a
    value ("no" for -n and -o); ``long_takes``: long ones. ``--`` ends options;
    a dynamic word is a positional (the gate cannot tell)."""
    out, pos = [], []
    i = 0
    n = len(args)
    while i < n:
        w = args[i]
        v = w.value
        i += 1
        if v is None or v == "-" or not v.startswith("-") or (stop_at_positional and pos):
            pos.append(w)
            if stop_at_positional:
                pos.extend(args[i:])
                break
            continue
        if v == "--":
            pos.extend(args[i:])
            break
        if v.startswith("--"):
            name, eq, val = v.partition("=")
            if eq:
                out.append((name, _w(w, val)))
            elif name in long_takes and i < n:
                out.append((name, args[i]))
                i += 1
            else:
                out.append((name, None))
            continue
        j = 1
        while j < len(v):
            ch = v[j]
            if ch in takes:
                rest = v[j + 1:]
                if rest:
                    out.append(("-" + ch, _w(w, rest)))
                elif i < n:
                    out.append(("-" + ch, args[i]))
                    i += 1
                else:
                    out.append(("-" + ch, None))
                break
            out.append(("-" + ch, None))
            j += 1
    return out, pos


def _w(like, value: str):
    return type(like)(value, value)


def has(options, *names: str) -> bool:
    return any(name in names for name, _v in options)


def values(options, *names: str) -> list:
    return [v for name, v in options if name in names and v is not None]


def _lit(words) -> list[str]:
    return [w.value for w in words if w.value is not None]


def _sub(cmd, args, name_value: str | None = None):
    """A command run by another (env X, xargs X, npx X): same place and input."""
    name = args[0] if name_value is None else _w(args[0], name_value)
    sub = type(cmd)(name, cmd.text, cmd.cwd, cmd.context)
    sub.args = list(args[1:])
    sub.stdin = cmd.stdin
    return sub


def _first_word(cmd) -> str:
    return cmd.args[0].value if cmd.args and cmd.args[0].value is not None else ""


# -- kinds of command -------------------------------------------------------------------
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
            pos = [_w(cmd.name, ".")]
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
            ctx.run(_sub(cmd, rest))
            return
        if allowed is not None and sub not in allowed:
            ctx.hold("unknown-command", MEDIUM, f"{name} {sub} is not on the gate's allow-list", cmd)
            return
        if cwd:
            ctx.in_project(cmd)
        ctx.net(cmd.args, cmd)

    return check


# -- files -------------------------------------------------------------------------------
def c_ls(cmd, name, ctx):
    options, pos = opts(cmd.args, "IwT", ("--hide", "--ignore", "--width", "--tabsize", "--format", "--sort",
                                          "--time", "--time-style", "--color", "--block-size", "--quoting-style"))
    for w in pos or [_w(cmd.name, ".")]:
        ctx.read(w, cmd, listing=True)


def c_find(cmd, name, ctx):
    args = list(cmd.args)
    while args and args[0].value in ("-H", "-L", "-P") or (args and args[0].value is not None
                                                           and args[0].value.startswith(("-O", "-D"))):
        if args[0].value == "-D" and len(args) > 1:
            args.pop(0)
        args.pop(0)
    roots = []
    while args and (args[0].value is None or not args[0].value.startswith(("-", "(", "!", ")", ","))):
        roots.append(args.pop(0))
    for w in roots or [_w(cmd.name, ".")]:
        ctx.read(w, cmd, listing=True)
    for w in args:
        v = w.value
        if v is None:
            continue
        if v in ("-delete", "-exec", "-execdir", "-ok", "-okdir"):
            ctx.hold("find-exec" if v != "-delete" else "find-delete", HIGH,
                     f"find {v} {'deletes what it finds' if v == '-delete' else 'runs a command on what it finds'}",
                     cmd)
        elif v in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            ctx.hold("find-write", MEDIUM, f"find {v} writes a file", cmd)
    ctx.net(args, cmd)


def c_fd(cmd, name, ctx):
    options, pos = opts(cmd.args, "xXedtEcj", ("--exec", "--exec-batch", "--extension", "--type", "--exclude",
                                               "--max-depth", "--min-depth", "--exact-depth", "--threads",
                                               "--changed-within", "--changed-before", "--size", "--owner",
                                               "--base-directory", "--search-path", "--color", "--max-results"))
    if has(options, "-x", "-X", "--exec", "--exec-batch"):
        ctx.hold("find-exec", HIGH, f"{name} --exec runs a command on what it finds", cmd)
    for w in (pos[1:] if pos else []) or [_w(cmd.name, ".")]:
        ctx.read(w, cmd, listing=True)
    for v in values(options, "--search-path", "--base-directory"):
        ctx.read(v, cmd, listing=True)


GREP_TAKES = "efmABCDd"
GREP_LONG = ("--regexp", "--file", "--max-count", "--after-context", "--before-context", "--context", "--include",
             "--exclude", "--exclude-dir", "--include-dir", "--label", "--binary-files", "--devices",
             "--directories", "--color", "--colour", "--group-separator", "--exclude-from")


def c_grep(cmd, name, ctx):
    options, pos = opts(cmd.args, GREP_TAKES, GREP_LONG)
    explicit = has(options, "-e", "--regexp", "-f", "--file")
    if not explicit and pos:
        pos = pos[1:]  # the pattern
    rec = has(options, "-r", "-R", "--recursive", "--dereference-recursive") or \
        any(o in ("-d", "--directories") and v is not None and v.value == "recurse" for o, v in options)
    if not pos and rec:
        pos = [_w(cmd.name, ".")]
    for w in pos:
        ctx.read(w, cmd, recursive=rec)
    for v in values(options, "-f", "--file", "--exclude-from"):
        ctx.read(v, cmd)


def c_rg(cmd, name, ctx):
    options, pos = opts(cmd.args, "efgtTmABCjMdErEI", (
        "--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--after-context",
        "--before-context", "--context", "--threads", "--max-columns", "--max-depth", "--pre", "--pre-glob",
        "--encoding", "--type-add", "--type-clear", "--sort", "--sortr", "--colors", "--color", "--ignore-file",
        "--path-separator", "--replace", "--max-filesize", "--context-separator", "--field-match-separator",
        "--field-context-separator", "--engine", "--dfa-size-limit", "--regex-size-limit", "--hostname-bin",
        "--hyperlink-format", "--generate"))
    if has(options, "--pre"):
        ctx.hold("rg-pre", HIGH, "rg --pre runs a command on every file it searches", cmd)
    if has(options, "--hostname-bin"):
        ctx.hold("rg-pre", HIGH, "rg --hostname-bin runs a command", cmd)
    explicit = has(options, "-e", "--regexp", "-f", "--file", "--files", "--type-list")
    if not explicit and pos:
        pos = pos[1:]
    for w in pos or [_w(cmd.name, ".")]:
        ctx.read(w, cmd, recursive=True)
    for v in values(options, "-f", "--file", "--ignore-file"):
        ctx.read(v, cmd)


def c_sort(cmd, name, ctx):
    options, pos = opts(cmd.args, "ktoSTy", ("--key", "--field-separator", "--output", "--buffer-size",
                                            "--temporary-directory", "--parallel", "--files0-from", "--sort",
                                            "--batch-size", "--compress-program", "--random-source"))
    if has(options, "--compress-program"):
        ctx.hold("sort-program", HIGH, "sort --compress-program runs a command", cmd)
    for v in values(options, "-o", "--output"):
        ctx.write(v, cmd)
    for w in pos:
        ctx.read(w, cmd)


def c_uniq(cmd, name, ctx):
    options, pos = opts(cmd.args, "fsw", ("--skip-fields", "--skip-chars", "--check-chars", "--group",
                                         "--all-repeated"))
    if pos:
        ctx.read(pos[0], cmd)
    for w in pos[1:2]:
        ctx.write(w, cmd)


def c_jq(cmd, name, ctx):
    args = list(cmd.args)
    files, filter_seen, i = [], False, 0
    from_file = False
    while i < len(args):
        w = args[i]
        v = w.value
        i += 1
        if v in ("--arg", "--argjson"):
            i += 2
            continue
        if v in ("--slurpfile", "--rawfile"):
            if i + 1 < len(args):
                ctx.read(args[i + 1], cmd)
            i += 2
            continue
        if v in ("--indent", "-L"):
            i += 1
            continue
        if v in ("-f", "--from-file"):
            from_file = True
            if i < len(args):
                ctx.read(args[i], cmd)
            i += 1
            continue
        if v in ("--args", "--jsonargs"):
            break
        if v is not None and v.startswith("-") and v != "-":
            continue
        if not filter_seen and not from_file:
            filter_seen = True
            continue
        files.append(w)
    for w in files:
        ctx.read(w, cmd)


def c_yq(cmd, name, ctx):
    options, pos = opts(cmd.args, "opIe", ("--output-format", "--input-format", "--indent", "--expression",
                                           "--front-matter", "--xml-attribute-prefix"))
    if pos and pos[0].value in ("eval", "e", "eval-all", "ea"):
        pos = pos[1:]
    if pos and not has(options, "--expression"):
        pos = pos[1:]
    inplace = has(options, "-i", "--inplace")
    for w in pos:
        if inplace:
            ctx.write(w, cmd)
        else:
            ctx.read(w, cmd)


def c_cp(cmd, name, ctx, move: bool = False):
    options, pos = opts(cmd.args, "tSm", ("--target-directory", "--suffix", "--backup", "--sparse", "--reflink",
                                          "--preserve", "--no-preserve", "--mode"))
    rec = has(options, "-r", "-R", "-a", "--recursive", "--archive")
    target = values(options, "-t", "--target-directory")
    if target:
        sources, dests = pos, target
    elif len(pos) >= 2:
        sources, dests = pos[:-1], pos[-1:]
    else:
        ctx.hold("unknown-path", MEDIUM, f"{name} without a source and a destination the gate can see", cmd)
        return
    for w in sources:
        if move:
            ctx.write(w, cmd)  # the source goes away
        else:
            ctx.read(w, cmd, recursive=rec)
    for d in dests:
        ctx.write_into(sources, d, cmd, recursive=rec, move=move)


def c_mv(cmd, name, ctx):
    c_cp(cmd, name, ctx, move=True)


RM_RECURSIVE = re.compile(r"^-[a-zA-Z]*[rR]")


def c_rm(cmd, name, ctx):
    options, pos = opts(cmd.args)
    if has(options, "-r", "-R", "--recursive"):
        forced = has(options, "-f", "--force")
        ctx.hold("rm-rf", HIGH, "rm -rf deletes recursively without asking" if forced else
                 "rm -r deletes whole directories", cmd)
    if has(options, "--no-preserve-root"):
        ctx.hold("rm-rf", HIGH, "rm --no-preserve-root", cmd)
    if not pos:
        return
    for w in pos:
        ctx.write(w, cmd)


def c_paths_written(takes: str = "", long_takes: tuple[str, ...] = (), skip_first: bool = False,
                    ref_opts: tuple[str, ...] = ()):
    """Every positional is a file it writes (mkdir, touch, rmdir, chmod after its mode...)."""

    def check(cmd, name, ctx):
        options, pos = opts(cmd.args, takes, long_takes)
        refs = [v for o, v in options if o in ref_opts and v is not None]
        for v in refs:
            ctx.read(v, cmd)
        if skip_first and not any(o.startswith("--reference") for o, _v in options):
            pos = pos[1:]
        for w in pos:
            ctx.write(w, cmd)

    return check


def c_chmod(cmd, name, ctx):
    # a mode like -w or -x looks like an option: take the first argument that is not a real option as the mode
    args = list(cmd.args)
    rest, mode_seen = [], False
    ref = False
    for w in args:
        v = w.value
        if v is not None and v.startswith("--reference"):
            ref = True
            if "=" in v:
                ctx.read(_w(w, v.split("=", 1)[1]), cmd)
            continue
        if v in ("-R", "--recursive", "-v", "-c", "-f", "--silent", "--quiet", "--verbose", "--changes",
                 "-h", "--no-dereference", "--preserve-root", "--no-preserve-root", "-H", "-L", "-P", "--"):
            continue
        if not mode_seen and not ref:
            mode_seen = True
            continue
        rest.append(w)
    for w in rest:
        ctx.write(w, cmd)


def c_ln(cmd, name, ctx):
    options, pos = opts(cmd.args, "tS", ("--target-directory", "--suffix", "--backup"))
    target = values(options, "-t", "--target-directory")
    if target:
        sources, dests = pos, target
    elif len(pos) >= 2:
        sources, dests = pos[:-1], pos[-1:]
    elif len(pos) == 1:
        sources, dests = pos, [_w(pos[0], "./")]
    else:
        return
    for w in sources:
        ctx.read(w, cmd)  # a link to ~/.ssh inside the project is a way in: its target must not be sensitive
    for d in dests:
        ctx.write_into(sources, d, cmd, recursive=False, move=False)


def c_tee(cmd, name, ctx):
    _options, pos = opts(cmd.args, "", ("--output-error",))
    for w in pos:
        ctx.write(w, cmd)


def c_dd(cmd, name, ctx):
    for w in cmd.args:
        v = w.value
        if v is None:
            ctx.hold("unknown-path", MEDIUM, "dd with an operand the gate cannot see", cmd)
            continue
        key, eq, val = v.partition("=")
        if not eq:
            continue
        if key == "of":
            ctx.write(_w(w, val), cmd)
        elif key == "if":
            ctx.read(_w(w, val), cmd)


def c_truncate(cmd, name, ctx):
    options, pos = opts(cmd.args, "sr", ("--size", "--reference"))
    for v in values(options, "-r", "--reference"):
        ctx.read(v, cmd)
    for w in pos:
        ctx.write(w, cmd)


def c_install(cmd, name, ctx):
    options, pos = opts(cmd.args, "mogtSTC", ("--mode", "--owner", "--group", "--target-directory", "--suffix",
                                              "--backup", "--strip-program"))
    if has(options, "--strip-program"):
        ctx.hold("install-program", HIGH, "install --strip-program runs a command", cmd)
    if has(options, "-d", "--directory"):
        for w in pos:
            ctx.write(w, cmd)
        return
    target = values(options, "-t", "--target-directory")
    sources, dests = (pos, target) if target else (pos[:-1], pos[-1:])
    for w in sources:
        ctx.read(w, cmd)
    for d in dests:
        ctx.write_into(sources, d, cmd, recursive=False, move=False)


def c_xxd(cmd, name, ctx):
    options, pos = opts(cmd.args, "lscgon", ("-len", "-seek", "-cols", "-groupsize", "-name"))
    if pos:
        ctx.read(pos[0], cmd)
    for w in pos[1:2]:
        ctx.write(w, cmd)


def c_iconv(cmd, name, ctx):
    options, pos = opts(cmd.args, "fto", ("--from-code", "--to-code", "--output"))
    for v in values(options, "-o", "--output"):
        ctx.write(v, cmd)
    for w in pos:
        ctx.read(w, cmd)


def c_base64(cmd, name, ctx):
    options, pos = opts(cmd.args, "wbio", ("--wrap", "--input", "--output", "--break"))
    for v in values(options, "-o", "--output"):
        ctx.write(v, cmd)
    for v in values(options, "-i", "--input"):
        ctx.read(v, cmd)
    for w in pos:
        ctx.read(w, cmd)


def c_compress(cmd, name, ctx):
    """gzip and friends compress or expand files in place, unless they write to stdout."""
    options, pos = opts(cmd.args, "SobTMpL", ("--suffix", "--output", "--threads", "--memlimit"))
    to_stdout = has(options, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test")
    for v in values(options, "-o", "--output"):
        ctx.write(v, cmd)
    for w in pos:
        if to_stdout:
            ctx.read(w, cmd)
        else:
            ctx.write(w, cmd)


TAR_TAKES = "fCTXbHKLNVgFI"
TAR_LONG = ("--file", "--directory", "--files-from", "--exclude-from", "--blocking-factor", "--format",
            "--starting-file", "--tape-length", "--newer", "--after-date", "--label", "--listed-incremental",
            "--info-script", "--new-volume-script", "--use-compress-program", "--to-command", "--checkpoint-action",
            "--rsh-command", "--transform", "--xform", "--exclude", "--owner", "--group", "--mode", "--mtime",
            "--strip-components", "--index-file", "--newer-mtime", "--one-top-level", "--volno-file",
            "--backup", "--suffix")
TAR_HELD = {"-F": "runs a script", "--info-script": "runs a script", "--new-volume-script": "runs a script",
            "-I": "runs a compression program", "--use-compress-program": "runs a compression program",
            "--to-command": "runs a command on every member", "--checkpoint-action": "can run a command",
            "--rsh-command": "runs a remote shell", "-P": "extracts absolute paths anywhere",
            "--absolute-names": "extracts absolute paths anywhere", "--delete": "deletes members of an archive"}


def c_tar(cmd, name, ctx):
    args = list(cmd.args)
    if args and args[0].value is not None and args[0].value and not args[0].value.startswith("-"):
        # old style: `tar czf out.tgz dir` -- letters, then the values of the ones that take one, in order
        letters = args[0].value
        rest = args[1:]
        expanded = []
        for ch in letters:
            expanded.append(_w(args[0], "-" + ch))
            if ch in TAR_TAKES and rest:
                expanded.append(rest.pop(0))
        args = expanded + rest
    options, pos = opts(args, TAR_TAKES, TAR_LONG)
    for o, _v in options:
        if o in TAR_HELD:
            ctx.hold("tar-" + o.lstrip("-"), HIGH, f"tar {o} {TAR_HELD[o]}", cmd)
    modes = {o for o, _v in options}
    create = bool(modes & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate"})
    extract = bool(modes & {"-x", "--extract", "--get"})
    archives = values(options, "-f", "--file")
    where = values(options, "-C", "--directory")
    for v in values(options, "-T", "--files-from", "-X", "--exclude-from"):
        ctx.read(v, cmd)
    for v in values(options, "-g", "--listed-incremental", "--index-file"):
        ctx.write(v, cmd)
    if create:
        for a in archives:
            if a.value != "-":
                ctx.write(a, cmd)
        base = where[-1] if where else None
        for w in pos:
            ctx.read(w if base is None else _join_word(base, w), cmd, recursive=True)
    elif extract:
        for a in archives:
            if a.value != "-":
                ctx.read(a, cmd)
        if has(options, "-O", "--to-stdout"):
            return
        # an archive can hold any path, .claude/settings.json or .git/hooks/* among them
        ctx.hold("archive-extract", MEDIUM, "tar extracts files the gate cannot see (an archive can hold "
                                            ".claude/settings.json or .git/hooks/*)", cmd)
    else:  # list, compare
        for a in archives:
            if a.value != "-":
                ctx.read(a, cmd)


def _join_word(base, w):
    if base.value is None or w.value is None:
        return type(w)(None, w.text)
    if w.value.startswith("/"):
        return w
    return type(w)(base.value.rstrip("/") + "/" + w.value, w.text, w.glob)


def c_unzip(cmd, name, ctx):
    options, pos = opts(cmd.args, "dxP", ())
    if pos:
        ctx.read(pos[0], cmd)
    if has(options, "-l", "-t", "-v", "-Z", "-p", "-c", "-z"):
        return
    ctx.hold("archive-extract", MEDIUM, "unzip extracts files the gate cannot see (an archive can hold "
                                        ".claude/settings.json or .git/hooks/*)", cmd)


def c_zip(cmd, name, ctx):
    options, pos = opts(cmd.args, "btnxiP", ("--temp-path", "--suffixes", "--exclude", "--include", "--password",
                                            "--unzip-command"))
    if has(options, "--unzip-command") or any(w.value == "-TT" for w in cmd.args):
        ctx.hold("zip-command", HIGH, "zip -TT runs a command", cmd)
    rec = has(options, "-r", "--recurse-paths")
    if pos:
        ctx.write(pos[0], cmd)
    for w in pos[1:]:
        ctx.read(w, cmd, recursive=rec)


def c_patch(cmd, name, ctx):
    options, pos = opts(cmd.args, "pioDdrBzVYFgxRMs", ("--strip", "--input", "--output", "--ifdef", "--directory",
                                                       "--reject-file", "--prefix", "--suffix", "--backup-if-mismatch",
                                                       "--basename-prefix", "--fuzz", "--get", "--debug",
                                                       "--version-control", "--quoting-style"))
    for v in values(options, "-i", "--input"):
        ctx.read(v, cmd)
    for v in values(options, "-o", "--output", "-r", "--reject-file"):
        if v.value != "-":
            ctx.write(v, cmd)
    where = values(options, "-d", "--directory")
    if where:
        for w in where:
            ctx.write(w, cmd)
    else:
        ctx.in_project(cmd, "patch writes the files its patch names, under the current directory")
    if pos:
        ctx.write(pos[0], cmd)
    for w in pos[1:2]:
        ctx.read(w, cmd)


# -- sed and awk: their programs can write files and run commands --------------------------------
_SED_ADDR = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|/(?:\\.|[^/\\\n])*/[IM]*|\\(.)(?:\\.|(?!\1).)*\1[IM]*)?")


def sed_unsafe(script: str) -> str | None:
    """Why a sed script is held (a command that writes a file, reads one or
    runs a command: w W r R e, s///w, s///e), or None. Unreadable scripts are
    held too."""
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;{}!":
            i += 1
            continue
        if ch == "#":
            j = script.find("\n", i)
            i = n if j == -1 else j + 1
            continue
        m = _SED_ADDR.match(script, i)
        j = m.end()
        if j < n and script[j] == ",":
            m = _SED_ADDR.match(script, j + 1)
            j = m.end()
        while j < n and script[j] in " \t!":
            j += 1
        if j >= n:
            return None
        c = script[j]
        j += 1
        if c in "wWrReF" and c != "F":
            return f"sed's {c} command {'runs a command' if c == 'e' else 'reads a file' if c in 'rR' else 'writes a file'}"
        if c in "s" or c == "y":
            if j >= n:
                return "a sed command the gate cannot read"
            delim = script[j]
            if delim in "\\\n":
                return "a sed command the gate cannot read"
            j += 1
            for _part in range(2):
                while j < n and script[j] != delim:
                    j += 2 if script[j] == "\\" else 1
                j += 1
            if c == "s":
                k = j
                while k < n and script[k] not in ";\n}":
                    if script[k] in "we":
                        return f"sed's s///{script[k]} {'runs the result as a command' if script[k] == 'e' else 'writes a file'}"
                    k += 1
                j = k
            i = j
            continue
        if c in "aic":  # text to the end of the line
            k = script.find("\n", j)
            while k != -1 and k > 0 and script[k - 1] == "\\":
                k = script.find("\n", k + 1)
            i = n if k == -1 else k + 1
            continue
        if c in ":btTvlqQLz":  # a label or a number to the end of the command
            k = j
            while k < n and script[k] not in ";\n}":
                k += 1
            i = k
            continue
        if c in "=dDgGhHnNpPx{}":
            i = j
            continue
        return f"a sed command the gate does not know ({c!r})"
    return None


def c_sed(cmd, name, ctx):
    args = list(cmd.args)
    scripts, files, inplace = [], [], False
    from_file = False
    i = 0
    while i < len(args):
        w = args[i]
        v = w.value
        i += 1
        if v is None:
            files.append(w) if (scripts or from_file) else scripts.append(w)
            continue
        if v == "--":
            rest = args[i:]
            if not scripts and not from_file and rest:
                scripts.append(rest.pop(0))
            files.extend(rest)
            break
        if v.startswith("--"):
            key, eq, val = v.partition("=")
            if key in ("--expression",):
                scripts.append(_w(w, val) if eq else (args[i] if i < len(args) else _w(w, "")))
                i += 0 if eq else 1
            elif key == "--file":
                from_file = True
                f = _w(w, val) if eq else (args[i] if i < len(args) else None)
                i += 0 if eq else 1
                if f is not None:
                    ctx.read(f, cmd)
            elif key == "--in-place":
                inplace = True
            elif key in ("--line-length",) and not eq:
                i += 1
            continue
        if v.startswith("-") and len(v) > 1:
            j = 1
            while j < len(v):
                ch = v[j]
                if ch == "i":
                    inplace = True
                    if j + 1 == len(v) and i < len(args) and args[i].value == "":  # BSD: sed -i '' ...
                        i += 1
                    break  # the rest is the backup suffix
                if ch in "ef":
                    rest = v[j + 1:]
                    val = _w(w, rest) if rest else (args[i] if i < len(args) else _w(w, ""))
                    if not rest:
                        i += 1
                    if ch == "e":
                        scripts.append(val)
                    else:
                        from_file = True
                        ctx.read(val, cmd)
                    break
                if ch == "l":
                    if j + 1 == len(v):
                        i += 1
                    break
                j += 1
            continue
        if not scripts and not from_file:
            scripts.append(w)
        else:
            files.append(w)
    for s in scripts:
        if s.value is None:
            ctx.hold("sed-unsafe", HIGH, "a sed script the gate cannot see before it runs", cmd)
            continue
        why = sed_unsafe(s.value)
        if why:
            ctx.hold("sed-unsafe", HIGH, why, cmd)
    for w in files:
        if inplace:
            ctx.write(w, cmd)
        else:
            ctx.read(w, cmd)


_AWK_UNSAFE = re.compile(r"\bsystem\s*\(|\||\bprintf?\b[^;{}\n]*>|@load|@include|\bfflush\s*\(\s*\)")


def c_awk(cmd, name, ctx):
    options, pos = opts(cmd.args, "FvfEiel", ("--field-separator", "--assign", "--file", "--exec", "--include",
                                              "--load", "--source"))
    if has(options, "-i", "--include", "-l", "--load"):
        ctx.hold("awk-unsafe", HIGH, f"{name} -i/-l loads code or extensions", cmd)
    programs = values(options, "-e", "--source")
    prog_files = values(options, "-f", "--file", "-E", "--exec")
    for f in prog_files:
        ctx.read(f, cmd)
    if not programs and not prog_files:
        if not pos:
            return
        programs, pos = [pos[0]], pos[1:]
    for p in programs:
        if p.value is None:
            ctx.hold("awk-unsafe", HIGH, f"an {name} program the gate cannot see before it runs", cmd)
        elif _AWK_UNSAFE.search(p.value):
            ctx.hold("awk-unsafe", HIGH, f"the {name} program runs commands or writes files (system(), |, print >)",
                     cmd)
    for w in pos:
        if w.value is not None and "=" in w.value and not w.value.startswith(("/", ".")):
            continue  # var=value
        ctx.read(w, cmd)


# -- wrappers: they run another command ---------------------------------------------------------------
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
            ctx.assignment(key, _w(args[0], val), cmd)
            args.pop(0)
        else:
            break
    if args:
        ctx.run(_sub(cmd, args))


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
            ctx.run(_sub(cmd, args))

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
    ctx.run(_sub(cmd, args))


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
            f = _w(cmd.name, val) if eq else (args.pop(0) if args else None)
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
        ctx.run(_sub(cmd, args))
    else:
        ctx.run(_sub(cmd, args + [unknown]))


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
        ctx.run(_sub(cmd, args))

    return check


def c_npx(cmd, name, ctx):
    c_runner()(cmd, name, ctx)


# -- interpreters and shells -------------------------------------------------------------------------
def _fed(cmd) -> str:
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
                                                f"standard input{_fed(cmd)}", cmd)
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
        ctx.hold("pipe-to-shell", HIGH, f"{name} reads its commands from standard input{_fed(cmd)}", cmd)
        return
    _script(cmd, name, script, ctx)
    ctx.net(args[1:], cmd)


def _script(cmd, name, script, ctx):
    """An interpreter running a script file: the file must be known and not sensitive."""
    if script.value is None:
        ctx.hold("dynamic-script", HIGH, f"{name} runs a script whose name is only known when it runs "
                                         f"({script.text[:60]})", cmd)
        return
    if script.value in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        ctx.hold("pipe-to-shell", HIGH, f"{name} reads its program from standard input{_fed(cmd)}", cmd)
        return
    ctx.read(script, cmd)


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
                                            f"{_fed(cmd)}", cmd)
        return
    script = args[0]
    _script(cmd, name, script, ctx)
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
        return ctx.run(_sub(cmd, [_w(cmd.name, "pip")] + args))
    if top in PYTHON_HELD_MODULES and PYTHON_HELD_MODULES[top]:
        if top == "twine" and args and args[0].value == "check":
            return
        ctx.hold(f"python-m-{top}", HIGH, f"{name} -m {mod} {PYTHON_HELD_MODULES[top]}", cmd)
        return
    if top in ("black", "isort", "ruff", "autopep8", "yapf"):
        return ctx.run(_sub(cmd, [_w(cmd.name, top)] + args))
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
                                                f"{_fed(cmd)}", cmd)
            return
        _script(cmd, name, args[0], ctx)
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
        ctx.hold("pipe-to-shell", HIGH, f"{name} runs commands from standard input{_fed(cmd)}", cmd)
        return
    ctx.read(w, cmd)
    ctx.inside(w, cmd, "sources (runs) a file outside the project")


# -- version control -----------------------------------------------------------------------------------
GIT_SAFE_CONFIG = ("color.", "user.name", "user.email", "advice.", "init.defaultbranch", "commit.gpgsign",
                   "core.quotepath", "core.autocrlf", "pull.rebase", "push.autosetupremote", "merge.conflictstyle",
                   "log.", "format.pretty", "safe.directory", "gc.auto", "fetch.prune", "rebase.autostash",
                   "diff.noprefix", "diff.renames", "column.ui", "tag.sort", "branch.sort", "i18n.")
GIT_READ = {"status", "diff", "log", "show", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
            "ls-files", "ls-tree", "ls-remote", "cat-file", "grep", "show-ref", "for-each-ref", "merge-base", "name-rev",
            "whatchanged", "range-diff", "cherry", "count-objects", "fsck", "verify-commit", "verify-tag",
            "check-ignore", "check-attr", "check-ref-format", "var", "help", "version", "diff-tree", "diff-files",
            "diff-index", "show-branch", "reflog", "config", "remote", "branch", "tag", "stash", "worktree",
            "submodule", "notes", "archive", "bundle", "symbolic-ref", "hash-object", "get-tar-commit-id",
            "verify-pack", "show-index", "lfs"}
GIT_WRITE = {"add", "commit", "mv", "rm", "checkout", "switch", "restore", "reset", "merge", "rebase", "cherry-pick",
             "revert", "pull", "fetch", "init", "clone", "am", "apply", "format-patch", "bisect", "gc", "commit-tree",
             "update-index", "sparse-checkout", "push", "clean", "mergetool", "maintenance", "stage", "prune",
             "repack", "pack-refs", "read-tree", "write-tree", "mktree", "mktag", "rerere", "citool", "replace",
             "filter-branch", "filter-repo", "update-ref", "send-email", "daemon", "credential", "difftool",
             "instaweb", "fast-import", "fast-export", "request-pull", "svn", "p4", "cvsimport", "archimport",
             "quiltimport", "http-backend", "upload-pack", "receive-pack", "shell", "imap-send", "credential-store",
             "credential-cache", "range-diff"}
GIT_HELD = {"filter-branch": "rewrites the whole history", "filter-repo": "rewrites the whole history",
            "update-ref": "moves or deletes refs directly", "send-email": "sends patches by mail",
            "daemon": "serves the repository", "credential": "reads stored credentials",
            "credential-store": "reads stored credentials", "credential-cache": "reads stored credentials",
            "mergetool": "runs a merge tool", "difftool": "runs a diff tool", "instaweb": "starts a web server",
            "replace": "replaces objects", "prune": "deletes unreachable objects",
            "fast-import": "writes objects and refs directly", "http-backend": "serves the repository",
            "upload-pack": "serves the repository", "receive-pack": "serves the repository", "shell": "a git shell",
            "imap-send": "sends mail", "svn": "talks to another VCS", "p4": "talks to another VCS",
            "cvsimport": "talks to another VCS", "archimport": "talks to another VCS", "citool": "a GUI",
            "maintenance": "registers background jobs", "request-pull": "sends a request",
            "quiltimport": "applies a patch series"}
GIT_GLOBAL_TAKES = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
                    "--exec-path", "--list-cmds", "--attr-source")


def c_git(cmd, name, ctx):
    args = list(cmd.args)
    cwd_word = None
    while args and args[0].value is not None and args[0].value.startswith("-"):
        v = args.pop(0).value
        key, eq, val = v.partition("=")
        if key in ("--version", "--help", "-v", "-h"):
            return
        if key in GIT_GLOBAL_TAKES:
            value = val if eq else (args.pop(0).value if args else None)
            if value is None:
                ctx.hold("git-dynamic", HIGH, f"git {key} with a value only known when it runs", cmd)
                return
            if key == "-C":
                cwd_word = _w(cmd.name, value) if cwd_word is None else _join_word(cwd_word, _w(cmd.name, value))
            elif key == "-c":
                if not value.lower().startswith(GIT_SAFE_CONFIG):
                    ctx.hold("git-config", HIGH, f"git -c {value.split('=')[0]} can make git run a command", cmd)
            elif key in ("--git-dir", "--work-tree"):
                ctx.write(_w(cmd.name, value), cmd)
            elif key in ("--config-env", "--exec-path", "--super-prefix", "--list-cmds"):
                ctx.hold("git-config", HIGH, f"git {key} changes what git runs", cmd)
    if cwd_word is not None:
        cmd = _with_cwd(cmd, cwd_word, ctx)
        if cmd is None:
            return
    if not args:
        return
    sub = args[0].value
    rest = args[1:]
    if sub is None:
        ctx.hold("dynamic-command", HIGH, "git's subcommand is only known when it runs", cmd)
        return
    if sub in GIT_HELD:
        ctx.hold(f"git-{sub}", HIGH, f"git {sub} {GIT_HELD[sub]}", cmd)
        return
    if sub not in GIT_READ and sub not in GIT_WRITE:
        ctx.hold("unknown-command", MEDIUM, f"git {sub} is not on the gate's allow-list (an alias may run anything)",
                 cmd)
        return
    if cmd.cwd is not None:
        ctx.read(_w(cmd.name, "."), cmd, listing=True)  # the repository itself must not be a sensitive place
    check = GIT_SUB.get(sub)
    if check is not None:
        check(cmd, sub, rest, ctx)
    if sub in GIT_WRITE:
        ctx.in_project(cmd, f"git {sub} writes the repository in the current directory")
    ctx.net(rest, cmd)  # git commit -F ~/.ssh/id_rsa, git diff --no-index ~/.aws/credentials ...


def _with_cwd(cmd, where, ctx):
    """The command as if run in ``where`` (git -C, make -C)."""
    if where.value is None:
        ctx.hold("unknown-path", MEDIUM, f"-C {where.text[:60]}: a directory only known when it runs", cmd)
        return None
    path = ctx.path_of(where, cmd.cwd)
    sub = type(cmd)(cmd.name, cmd.text, path, cmd.context)
    sub.args = cmd.args
    sub.stdin = cmd.stdin
    return sub


def _git_push(cmd, sub, rest, ctx):
    options, pos = opts(rest, "oc", ("--repo", "--receive-pack", "--exec", "--push-option", "--recurse-submodules",
                                     "--signed", "--force-with-lease"))
    for o, v in options:
        if o in ("-f", "--force", "--force-with-lease", "--force-if-includes"):
            ctx.hold("git-push-force", HIGH, "git push --force rewrites the remote's history", cmd)
        elif o == "--mirror":
            ctx.hold("git-push-force", HIGH, "git push --mirror overwrites and deletes every ref on the remote", cmd)
        elif o in ("-d", "--delete"):
            ctx.hold("git-push-delete", HIGH, "git push --delete deletes refs on the remote", cmd)
        elif o == "--prune":
            ctx.hold("git-push-delete", HIGH, "git push --prune deletes refs on the remote", cmd)
        elif o in ("--receive-pack", "--exec"):
            ctx.hold("git-config", HIGH, f"git push {o} runs a command on the remote", cmd)
        elif o == "--repo" and v is not None:
            pos.insert(0, v)
    if pos:
        remote = pos[0]
        if remote.value is None:
            ctx.hold("git-push-dynamic", HIGH, "git push to a remote only known when it runs", cmd)
        elif not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", remote.value):
            ctx.hold("git-push-url", HIGH, f"git push to {remote.value[:80]} (a URL or path, not a named remote): "
                                           "the code leaves for a place the gate cannot vet", cmd)
    for ref in pos[1:]:
        v = ref.value
        if v is None:
            ctx.hold("git-push-dynamic", HIGH, "git push of a refspec only known when it runs", cmd)
        elif v.startswith("+"):
            ctx.hold("git-push-force", HIGH, f"git push {v}: a + refspec forces the update", cmd)
        elif v.startswith(":") or v.endswith(":"):
            ctx.hold("git-push-delete", HIGH, f"git push {v}: an empty source deletes the remote ref", cmd)


def _git_reset(cmd, sub, rest, ctx):
    for w in rest:
        if w.value in ("--hard", "--merge", "--keep"):
            ctx.hold("git-reset-hard", HIGH, f"git reset {w.value} throws away uncommitted work", cmd)


def _git_clean(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "eX", ("--exclude",))
    if not has(options, "-n", "--dry-run"):
        ctx.hold("git-clean", HIGH, "git clean deletes untracked files (only -n, a dry run, passes)", cmd)


def _git_checkout(cmd, sub, rest, ctx):
    options, pos = opts(rest, "bB", ("--orphan", "--conflict", "--pathspec-from-file"))
    if any(w.value == "--" for w in rest):
        ctx.hold("git-discard", HIGH, "git checkout -- <paths> throws away uncommitted changes to them", cmd)
        return
    for o, _v in options:
        if o in ("-f", "--force", "--ours", "--theirs", "-p", "--patch", "-m", "--merge", "--pathspec-from-file",
                 "--overwrite-ignore"):
            ctx.hold("git-discard", HIGH, f"git checkout {o} can throw away uncommitted work", cmd)
            return
        if o == "-B":
            ctx.hold("git-discard", HIGH, "git checkout -B resets an existing branch", cmd)
            return
    creating = has(options, "-b", "--orphan")
    if creating:
        return
    if len(pos) > 1:
        ctx.hold("git-discard", HIGH, "git checkout <commit> <paths> overwrites uncommitted changes to those paths",
                 cmd)
        return
    for w in pos:
        if w.value is None:
            ctx.hold("git-discard", HIGH, "git checkout of something only known when it runs (a path would lose "
                                          "its changes)", cmd)
        elif w.value == "." or w.glob or ctx.exists(w, cmd):
            ctx.hold("git-discard", HIGH, f"git checkout {w.value} restores files, throwing away uncommitted changes",
                     cmd)


def _git_switch(cmd, sub, rest, ctx):
    for w in rest:
        if w.value in ("-f", "--force", "--discard-changes", "-C", "--force-create"):
            ctx.hold("git-discard", HIGH, f"git switch {w.value} can throw away work", cmd)


def _git_restore(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "sS", ("--source", "--pathspec-from-file"))
    staged = has(options, "-S", "--staged")
    worktree = has(options, "-W", "--worktree")
    if not staged or worktree:
        ctx.hold("git-discard", HIGH, "git restore throws away uncommitted changes (only --staged passes)", cmd)


def _git_stash(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if pos and pos[0].value in ("drop", "clear"):
        ctx.hold("git-stash-drop", HIGH, f"git stash {pos[0].value} deletes stashed work", cmd)
    elif pos and pos[0].value is None:
        ctx.hold("git-stash-drop", HIGH, "git stash with a subcommand only known when it runs", cmd)


def _git_branch(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "ut", ("--set-upstream-to", "--track", "--contains", "--no-contains", "--merged",
                                      "--no-merged", "--points-at", "--format", "--sort", "--column"))
    forced = has(options, "-f", "--force")
    if has(options, "-D") or (has(options, "-d", "--delete") and forced):
        ctx.hold("git-branch-delete", HIGH, "git branch -D deletes a branch even if it is not merged", cmd)
    elif has(options, "-M", "-C") or (forced and not has(options, "-d", "--delete")):
        ctx.hold("git-branch-delete", HIGH, "git branch -f/-M/-C overwrites an existing branch", cmd)


def _git_tag(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "mFun", ("--message", "--file", "--local-user", "--sort", "--contains", "--points-at",
                                        "--format", "--merged", "--no-merged", "--cleanup", "--column"))
    if has(options, "-d", "--delete"):
        ctx.hold("git-tag-delete", HIGH, "git tag -d deletes a tag", cmd)
    if has(options, "-f", "--force"):
        ctx.hold("git-tag-delete", HIGH, "git tag -f moves an existing tag", cmd)
    for v in values(options, "-F", "--file"):
        ctx.read(v, cmd)


def _git_reflog(cmd, sub, rest, ctx):
    if rest and rest[0].value in ("expire", "delete"):
        ctx.hold("git-reflog-expire", HIGH, f"git reflog {rest[0].value} deletes the record that recovers lost work",
                 cmd)


GIT_CONFIG_READ = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                   "--get-colorbool", "--show-origin", "--show-scope", "--name-only")


def _git_config(cmd, sub, rest, ctx):
    options, pos = opts(rest, "f", ("--file", "--blob", "--type", "--default", "--comment", "--value"))
    for v in values(options, "-f", "--file"):
        ctx.read(v, cmd)
    if pos and pos[0].value in ("get", "list"):
        return
    if any(o in GIT_CONFIG_READ for o, _v in options):
        return
    if len(pos) == 1 and not any(o in ("--unset", "--unset-all", "--add", "--replace-all", "--rename-section",
                                         "--remove-section", "-e", "--edit") for o, _v in options):
        return  # git config KEY: a read
    ctx.hold("git-config", HIGH, "git config writes the repository's or the user's configuration "
                                 "(aliases, hooksPath, sshCommand... run commands)", cmd)


def _git_remote(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if not pos or pos[0].value in ("show", "get-url", "update"):
        return
    ctx.hold("git-remote", HIGH, f"git remote {pos[0].value or '...'} changes where the code is pushed and fetched",
             cmd)


def _git_worktree(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if not pos or pos[0].value in ("list", "lock", "unlock", "repair"):
        return
    if pos[0].value == "add":
        if len(pos) > 1:
            ctx.write(pos[1], cmd)
        return
    ctx.hold("git-worktree", HIGH, f"git worktree {pos[0].value or '...'} deletes or moves a working tree", cmd)


def _git_submodule(cmd, sub, rest, ctx):
    pos = [w for w in rest if w.value is None or not w.value.startswith("-")]
    if pos and pos[0].value in ("foreach", "deinit"):
        ctx.hold("git-submodule", HIGH, f"git submodule {pos[0].value} "
                                        f"{'runs a command in each' if pos[0].value == 'foreach' else 'deletes a working tree'}",
                 cmd)


def _git_bisect(cmd, sub, rest, ctx):
    if rest and rest[0].value == "run":
        ctx.hold("git-bisect-run", HIGH, "git bisect run runs a command", cmd)


def _git_rebase(cmd, sub, rest, ctx):
    for w in rest:
        if w.value is not None and (w.value in ("-x", "--exec") or w.value.startswith("--exec=")):
            ctx.hold("git-rebase-exec", HIGH, "git rebase --exec runs a command", cmd)


def _git_rm(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "", ("--pathspec-from-file",))
    if has(options, "-f", "--force"):
        ctx.hold("git-rm-force", HIGH, "git rm -f deletes files with uncommitted changes", cmd)


def _git_fetch(cmd, sub, rest, ctx):
    for w in rest:
        v = w.value or ""
        if v.startswith(("--upload-pack", "-u")) and sub in ("fetch", "pull", "clone", "ls-remote"):
            ctx.hold("git-config", HIGH, f"git {sub} --upload-pack runs a command", cmd)
        elif v.startswith(("--config", "-c", "--template", "--recurse-submodules-default")) and sub == "clone":
            ctx.hold("git-config", HIGH, f"git clone {v.split('=')[0]} can make git run a command", cmd)
    urls = [w for w in rest if w.value is not None and ("://" in w.value or "::" in w.value)]
    for w in urls:
        if w.value.startswith("ext::") or "::" in w.value.split("://")[0]:
            ctx.hold("git-ext-url", HIGH, f"git {sub} {w.value[:60]}: a transport that runs a command", cmd)
        else:
            ctx.url(w, cmd)
    if sub == "clone":
        _options, pos = opts(rest, "obujc", ("--origin", "--branch", "--upload-pack", "--reference", "--depth",
                                             "--separate-git-dir", "--config", "--template", "--jobs", "--filter",
                                             "--shallow-since", "--shallow-exclude", "--bundle-uri"))
        if len(pos) > 1:
            ctx.write(pos[1], cmd)


def _git_output(cmd, sub, rest, ctx):
    options, _pos = opts(rest, "oO", ("--output", "--output-directory"))
    for o, v in options:
        if v is None:
            continue
        if o in ("--output", "--output-directory") or (o == "-o" and sub in ("format-patch", "archive")):
            ctx.write(v, cmd)
        elif o == "-O" and sub == "grep":
            ctx.hold("git-grep-pager", HIGH, "git grep -O opens files with a command", cmd)
    if sub == "bundle" and rest and rest[0].value == "create" and len(rest) > 1:
        ctx.write(rest[1], cmd)
    if sub == "grep":
        for w in rest:
            if w.value is not None and w.value.startswith("--open-files-in-pager"):
                ctx.hold("git-grep-pager", HIGH, "git grep -O opens files with a command", cmd)


def _git_init(cmd, sub, rest, ctx):
    options, pos = opts(rest, "", ("--template", "--separate-git-dir", "--object-format", "--initial-branch",
                                   "--shared", "-b"))
    if has(options, "--template"):
        ctx.hold("git-config", HIGH, "git init --template copies hooks that then run", cmd)
    for w in pos:
        ctx.write(w, cmd)


GIT_SUB = {"push": _git_push, "reset": _git_reset, "clean": _git_clean, "checkout": _git_checkout,
           "switch": _git_switch, "restore": _git_restore, "stash": _git_stash, "branch": _git_branch,
           "tag": _git_tag, "reflog": _git_reflog, "config": _git_config, "remote": _git_remote,
           "worktree": _git_worktree, "submodule": _git_submodule, "bisect": _git_bisect, "rebase": _git_rebase,
           "rm": _git_rm, "fetch": _git_fetch, "pull": _git_fetch, "clone": _git_fetch, "ls-remote": _git_fetch,
           "diff": _git_output, "log": _git_output, "show": _git_output, "format-patch": _git_output,
           "archive": _git_output, "bundle": _git_output, "grep": _git_output, "init": _git_init}


# -- the network -------------------------------------------------------------------------------------------
CURL_TAKES = "oDdFTXHAeubcKxwmrCEYyzPUQtiqhK"
CURL_LONG = ("--output", "--dump-header", "--data", "--data-ascii", "--data-binary", "--data-raw",
             "--data-urlencode", "--json", "--form", "--form-string", "--upload-file", "--request", "--header",
             "--user-agent", "--referer", "--user", "--cookie", "--cookie-jar", "--config", "--proxy", "--resolve",
             "--connect-to", "--write-out", "--unix-socket", "--abstract-unix-socket", "--max-time",
             "--connect-timeout", "--retry", "--range", "--continue-at", "--trace", "--trace-ascii", "--stderr",
             "--output-dir", "--cert", "--key", "--cacert", "--capath", "--interface", "--dns-servers", "--doh-url",
             "--url", "--local-port", "--proxy-user", "--limit-rate", "--max-filesize", "--retry-delay",
             "--retry-max-time", "--etag-save", "--etag-compare", "--hsts", "--alt-svc", "--preproxy",
             "--proxy-header", "--mail-from", "--mail-rcpt", "--quote", "--oauth2-bearer", "--variable",
             "--expand-url", "--header-file", "--url-query", "--aws-sigv4", "--netrc-file", "--socks5",
             "--socks5-hostname", "--socks4", "--socks4a", "--max-redirs", "--tls-max", "--ciphers")
CURL_UPLOAD = {"-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F",
               "--form", "--form-string", "-T", "--upload-file", "--mail-rcpt", "--mail-from", "-Q", "--quote",
               "--url-query"}
CURL_REDIRECT = {"-x", "--proxy", "--preproxy", "--resolve", "--connect-to", "--unix-socket", "--abstract-unix-socket",
                 "--socks5", "--socks5-hostname", "--socks4", "--socks4a", "--dns-servers", "--interface"}
CURL_WRITES = {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr",
               "--output-dir", "--etag-save", "--hsts", "--alt-svc"}


def c_curl(cmd, name, ctx):
    options, pos = opts(cmd.args, CURL_TAKES, CURL_LONG)
    urls = list(pos)
    for o, v in options:
        if o in CURL_UPLOAD:
            ctx.hold("data-upload", HIGH, f"curl {o} sends data{' from a file' if v is not None and v.value is not None and v.value.startswith('@') else ''}"
                                          " to the network", cmd)
        elif o in ("-X", "--request"):
            if v is None or v.value is None or v.value.upper() not in ("GET", "HEAD", "OPTIONS"):
                ctx.hold("data-upload", HIGH, f"curl -X {v.value if v is not None and v.value else '...'} "
                                              "changes or sends data on a server", cmd)
        elif o in ("-K", "--config", "--netrc-file", "--variable", "--expand-url"):
            ctx.hold("curl-config", HIGH, f"curl {o} reads options or secrets from a file the gate cannot see", cmd)
        elif o in CURL_REDIRECT:
            ctx.hold("private-address", HIGH, f"curl {o} sends the request somewhere else than its URL says", cmd)
        elif o in CURL_WRITES and v is not None:
            if v.value != "-":
                ctx.write(v, cmd)
        elif o in ("-H", "--header", "--proxy-header", "-b", "--cookie", "--header-file") and v is not None:
            if v.value is None or v.value.startswith("@") or o == "--header-file":
                ctx.hold("curl-config", HIGH, f"curl {o} reads from a file or a value the gate cannot see", cmd)
        elif o in ("--url", "--doh-url") and v is not None:
            urls.append(v)
        elif o in ("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
            ctx.in_project(cmd, "curl -O writes into the current directory")
        elif o in ("-E", "--cert", "--key", "--cacert", "--capath") and v is not None:
            ctx.read(v, cmd)
    if not urls:
        return
    for w in urls:
        if w.value is None:
            ctx.hold("dynamic-url", HIGH, f"a URL only known when it runs ({w.text[:60]}): it can carry data out", cmd)
            continue
        if w.value.lower().startswith("file:"):
            rest = w.value[5:]
            if rest.startswith("//"):  # file://host/path: the host part is dropped (curl reads local files only)
                rest = "/" + rest[2:].partition("/")[2]
            from urllib.parse import unquote

            ctx.read(_w(w, unquote(rest) or "/"), cmd)
            continue
        if not any(ch in w.value for ch in "{}[]") or ("://[" in w.value and "]" in w.value and "{" not in w.value):
            ctx.url(w, cmd)
        else:
            ctx.hold("dynamic-url", HIGH, "curl expands {a,b} and [1-9] in URLs: hosts the gate cannot list", cmd)


WGET_LONG = ("--output-document", "--output-file", "--append-output", "--directory-prefix", "--input-file", "--base",
             "--execute", "--post-data", "--post-file", "--body-data", "--body-file", "--method", "--header",
             "--user-agent", "--user", "--password", "--http-user", "--http-password", "--load-cookies",
             "--save-cookies", "--tries", "--timeout", "--wait", "--level", "--accept", "--reject", "--domains",
             "--quota", "--limit-rate", "--restrict-file-names", "--config", "--ca-certificate", "--certificate",
             "--private-key", "--bind-address", "--referer", "--exclude-directories", "--include-directories",
             "--waitretry", "--read-timeout", "--dns-timeout", "--connect-timeout", "--progress", "--max-redirect",
             "--use-askpass", "--ftp-user", "--ftp-password", "--proxy-user", "--proxy-password", "--warc-file")
WGET_TAKES = "OoaPiBeUtTwlARDQ"


def c_wget(cmd, name, ctx):
    options, pos = opts(cmd.args, WGET_TAKES, WGET_LONG)
    wrote = False
    for o, v in options:
        if o in ("--post-data", "--post-file", "--body-data", "--body-file"):
            ctx.hold("data-upload", HIGH, f"wget {o} sends data to the network", cmd)
        elif o == "--method" and (v is None or v.value is None or v.value.upper() not in ("GET", "HEAD")):
            ctx.hold("data-upload", HIGH, "wget --method changes or sends data on a server", cmd)
        elif o in ("-e", "--execute", "--config", "-i", "--input-file", "--use-askpass", "-B", "--base"):
            ctx.hold("curl-config", HIGH, f"wget {o} takes commands or URLs the gate cannot see", cmd)
        elif o in ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies",
                   "--warc-file") and v is not None:
            if o in ("-O", "--output-document"):
                wrote = True
            if v.value != "-":
                ctx.write(v, cmd)
        elif o in ("-P", "--directory-prefix") and v is not None:
            wrote = True
            ctx.write(v, cmd)
        elif o in ("--spider",):
            wrote = True
        elif o in ("--load-cookies", "--certificate", "--private-key", "--ca-certificate") and v is not None:
            ctx.read(v, cmd)
        elif o in ("--header",) and (v is None or v.value is None):
            ctx.hold("dynamic-url", HIGH, "wget --header with a value only known when it runs", cmd)
    if not wrote:
        ctx.in_project(cmd, "wget saves into the current directory")
    for w in pos:
        if w.value is None:
            ctx.hold("dynamic-url", HIGH, f"a URL only known when it runs ({w.text[:60]}): it can carry data out", cmd)
        else:
            ctx.url(w, cmd)


def c_dns(cmd, name, ctx):
    for w in cmd.args:
        if w.value is None:
            ctx.hold("dynamic-url", HIGH, f"{name} of a name only known when it runs: DNS can carry data out", cmd)


def c_gh(cmd, name, ctx):
    args = [w for w in cmd.args]
    pos = [w.value for w in args if w.value is None or not w.value.startswith("-")]
    if not pos:
        return
    group = pos[0]
    verb = pos[1] if len(pos) > 1 else None
    allowed = {"pr": {"create", "view", "list", "status", "checkout", "diff", "checks", "comment", "edit", "ready"},
               "issue": {"create", "view", "list", "status", "comment", "edit"},
               "run": {"list", "view", "watch"}, "workflow": {"list", "view"}, "repo": {"view", "clone"},
               "auth": {"status"}, "search": None, "release": {"list", "view"}, "label": {"list"},
               "status": None, "browse": set(), "cache": {"list"}}
    if group is None or group not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"gh {group or '...'} is not on the gate's allow-list", cmd)
        return
    if group == "api":
        return
    verbs = allowed[group]
    if verbs is not None and verb not in verbs:
        ctx.hold(f"gh-{group}", MEDIUM if verb in ("merge", "close", "reopen") else HIGH,
                 f"gh {group} {verb or ''} is not on the gate's allow-list", cmd)
        return
    for w in args:
        if w.value is not None and w.value.startswith(("--body-file", "-F")):
            ctx.hold("data-upload", MEDIUM, "gh with a body read from a file", cmd)
    ctx.in_project(cmd, "gh works on the repository in the current directory")


def c_gh_api(cmd, name, ctx):
    options, _pos = opts(cmd.args[1:], "XfFHtpq", ("--method", "--field", "--raw-field", "--header", "--input",
                                                   "--jq", "--template", "--preview", "--hostname", "--cache"))
    for o, v in options:
        if o in ("-f", "-F", "--field", "--raw-field", "--input"):
            ctx.hold("data-upload", HIGH, f"gh api {o} sends data", cmd)
        elif o in ("-X", "--method") and (v is None or v.value is None or v.value.upper() not in ("GET", "HEAD")):
            ctx.hold("data-upload", HIGH, "gh api -X changes data on GitHub", cmd)
        elif o == "--hostname":
            ctx.hold("data-upload", HIGH, "gh api --hostname sends the token to another host", cmd)


# -- package managers and build tools ------------------------------------------------------------------------
PUBLISH = "publishes a package (data leaves for a registry)"


def _global_install(cmd, name, ctx):
    for w in cmd.args:
        if w.value in ("-g", "--global", "--location=global") or (w.value or "").startswith("--prefix"):
            ctx.hold("global-install", MEDIUM, f"{name} {w.value} installs outside the project", cmd)


def c_npm(cmd, name, ctx):
    held = {"publish": PUBLISH, "unpublish": "removes a published package", "deprecate": "changes a published package",
            "dist-tag": "changes a published package's tags", "owner": "changes who owns a package",
            "access": "changes a package's access", "team": "changes an organisation", "token": "manages auth tokens",
            "adduser": "logs in", "login": "logs in", "logout": "logs out", "profile": "changes the account",
            "hook": "manages registry hooks", "org": "changes an organisation", "star": "changes the registry",
            "unstar": "changes the registry", "link": "links into the global install", "ln": "links globally",
            "edit": "opens an editor", "set-script": "edits package.json scripts"}
    allowed = {"install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "add", "ci",
               "clean-install", "install-clean", "uninstall", "remove", "rm", "r", "un", "unlink", "update", "up",
               "upgrade", "udpate", "test", "t", "tst", "run", "run-script", "rum", "urn", "start", "stop", "restart",
               "ls", "list", "ll", "la", "outdated", "audit", "view", "info", "show", "v", "search", "s", "se",
               "find", "init", "create", "innit", "pack", "explain", "why", "doctor", "prefix", "root", "bin",
               "version", "exec", "x", "fund", "help", "dedupe", "ddp", "prune", "rebuild", "rb", "cache",
               "pkg", "query", "sbom", "install-test", "it", "install-ci-test", "cit", "config", "c", "get",
               "completion", "diff", "ping", "whoami", "repo", "docs", "bugs", "home", "shrinkwrap", "fix"}
    options, pos = opts(cmd.args, "wC", ("--workspace", "--prefix", "--registry", "--cache", "--userconfig",
                                        "--globalconfig", "--loglevel", "--tag", "--access", "--otp", "--omit",
                                        "--include", "--before", "--script-shell"))
    for o, _v in options:
        if o in ("--script-shell", "--userconfig", "--globalconfig", "--node-options"):
            ctx.hold("npm-config", HIGH, f"npm {o} changes what npm runs", cmd)
    if not pos:
        return
    sub = pos[0].value
    if sub is None:
        ctx.hold("dynamic-command", HIGH, "npm's subcommand is only known when it runs", cmd)
        return
    if sub in held:
        ctx.hold(f"npm-{sub}", HIGH, f"npm {sub} {held[sub]}", cmd)
        return
    if sub not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"npm {sub} is not on the gate's allow-list", cmd)
        return
    if sub in ("config", "c") and len(pos) > 1 and pos[1].value not in ("get", "list", "ls"):
        ctx.hold("npm-config", HIGH, "npm config set/delete/edit changes npm's configuration", cmd)
        return
    if sub in ("exec", "x"):
        return c_runner(2)(cmd, name, ctx)
    _global_install(cmd, name, ctx)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_js_pm(cmd, name, ctx):
    """pnpm, yarn, bun: the same rules as npm, their own words."""
    held = {"publish": PUBLISH, "unpublish": "removes a published package", "login": "logs in", "logout": "logs out",
            "owner": "changes who owns a package", "deprecate": "changes a published package", "global":
                "installs outside the project", "link": "links into the global install", "npm": "",
            "dist-tag": "changes a published package's tags", "token": "manages tokens"}
    options, pos = opts(cmd.args, "C", ("--filter", "--dir", "--cwd", "--workspace"))
    if name == "bun":
        for o, _v in options:
            if o in ("-e", "--eval", "-p", "--print"):
                ctx.hold("interpreter-c", HIGH, f"bun {o} runs the program given on the command line", cmd)
                return
    if not pos:
        if name == "bun" and not options:
            ctx.hold("interpreter-stdin", HIGH, "bun with no script", cmd)
            return
        ctx.in_project(cmd)
        return
    sub = pos[0].value
    if sub is None:
        ctx.hold("dynamic-command", HIGH, f"{name}'s subcommand is only known when it runs", cmd)
        return
    if sub == "npm" and len(pos) > 1 and pos[1].value in ("publish", "login", "logout"):
        ctx.hold(f"{name}-publish", HIGH, f"{name} npm {pos[1].value} {PUBLISH}", cmd)
        return
    if sub in held and held[sub]:
        ctx.hold(f"{name}-{sub}", HIGH, f"{name} {sub} {held[sub]}", cmd)
        return
    if sub in ("dlx", "x", "exec"):
        return c_runner(2)(cmd, name, ctx)
    if sub == "config" and len(pos) > 1 and pos[1].value not in ("get", "list"):
        ctx.hold(f"{name}-config", HIGH, f"{name} config set changes its configuration", cmd)
        return
    if name == "bun" and sub not in BUN_SUBS:
        _script(cmd, name, pos[0], ctx)  # bun FILE runs it
    _global_install(cmd, name, ctx)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


BUN_SUBS = {"install", "i", "add", "a", "remove", "rm", "update", "run", "test", "build", "create", "init", "pm",
            "outdated", "upgrade", "patch", "why", "audit", "info", "c"}


def c_pip(cmd, name, ctx):
    options, pos = opts(cmd.args, "rcetid", ("--requirement", "--constraint", "--editable", "--target", "--index-url",
                                             "--extra-index-url", "--find-links", "--prefix", "--root", "--src",
                                             "--python", "--cache-dir", "--log", "--dest", "--report"))
    if not pos:
        return
    sub = pos[0].value
    allowed = {"install", "uninstall", "download", "list", "show", "freeze", "check", "wheel", "hash", "cache",
               "index", "inspect", "debug", "search", "help", "config", "completion", "lock"}
    if sub is None or sub not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"{name} {sub or '...'} is not on the gate's allow-list", cmd)
        return
    if sub == "config" and (len(pos) < 2 or pos[1].value not in ("get", "list", "debug")):
        ctx.hold("pip-config", HIGH, "pip config set/edit changes where packages come from", cmd)
        return
    for v in values(options, "-r", "--requirement", "-c", "--constraint"):
        ctx.read(v, cmd)
    for v in values(options, "-t", "--target", "--prefix", "--root", "-d", "--dest", "--log", "--report"):
        if v.value != "-":
            ctx.write(v, cmd)
    ctx.net(cmd.args, cmd)


def c_uv(cmd, name, ctx):
    options, pos = opts(cmd.args, "p", ("--directory", "--project", "--python", "--cache-dir", "--config-file",
                                        "--color"))
    if not pos:
        return
    sub = pos[0].value
    if sub == "run":
        return c_runner(2)(cmd, name, ctx)
    if sub == "pip":
        rest = cmd.args[cmd.args.index(pos[0]) + 1:]
        return c_pip(_sub(cmd, [_w(cmd.name, "pip")] + rest), "uv pip", ctx)
    if sub == "tool":
        if len(pos) > 1 and pos[1].value == "run":
            return c_runner(3)(cmd, name, ctx)
        if len(pos) > 1 and pos[1].value in ("list", "dir"):
            return
        ctx.hold("global-install", MEDIUM, "uv tool install puts programs outside the project", cmd)
        return
    if sub == "publish":
        ctx.hold("uv-publish", HIGH, f"uv publish {PUBLISH}", cmd)
        return
    if sub == "self":
        ctx.hold("global-install", MEDIUM, "uv self update replaces uv", cmd)
        return
    if sub not in ("sync", "lock", "add", "remove", "venv", "python", "init", "build", "tree", "export", "cache",
                   "version", "help", "generate-shell-completion", "format"):
        ctx.hold("unknown-command", MEDIUM, f"uv {sub or '...'} is not on the gate's allow-list", cmd)
        return
    if sub != "python" and sub != "cache":
        ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_uvx(cmd, name, ctx):
    c_runner()(cmd, name, ctx)


def c_cargo(cmd, name, ctx):
    held = {"publish": PUBLISH, "yank": "changes a published crate", "owner": "changes who owns a crate",
            "login": "logs in", "logout": "logs out", "install": "puts programs on your PATH, outside the project",
            "uninstall": "removes installed programs"}
    allowed = {"build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "d", "fmt", "clippy", "new",
               "init", "add", "remove", "rm", "update", "tree", "metadata", "search", "clean", "fix", "vendor",
               "generate-lockfile", "locate-project", "pkgid", "verify-project", "version", "help", "rustc",
               "rustdoc", "report", "info", "nextest", "llvm-cov", "tarpaulin", "audit", "deny", "outdated", "expand",
               "machete", "watch", "make", "insta", "package"}
    subcommands(allowed, held, takes="Z", long_takes=("--manifest-path", "--config", "--color", "-C"))(cmd, name, ctx)
    for w in cmd.args:
        if w.value is not None and w.value.startswith(("--target-dir", "--config")):
            if w.value.startswith("--config"):
                ctx.hold("cargo-config", HIGH, "cargo --config can set a wrapper that runs any command", cmd)


def c_go(cmd, name, ctx):
    held = {"install": "puts programs on your PATH, outside the project"}
    allowed = {"build", "test", "run", "vet", "fmt", "mod", "get", "list", "env", "version", "doc", "generate",
               "work", "clean", "tool", "help", "bug", "fix"}
    options, pos = opts(cmd.args)
    if pos and pos[0].value == "env" and any(w.value in ("-w", "-u") for w in cmd.args):
        ctx.hold("go-env", HIGH, "go env -w changes go's configuration (GOFLAGS, GOPROXY, toolexec...)", cmd)
        return
    for w in cmd.args:
        if w.value is not None and w.value.startswith(("-toolexec", "--toolexec", "-exec", "--exec", "-overlay")):
            ctx.hold("go-exec", HIGH, f"go {w.value.split('=')[0]} runs a command of its own", cmd)
    subcommands(allowed, held)(cmd, name, ctx)
    options, pos = opts(cmd.args, "o", ())
    for v in values(options, "-o"):
        ctx.write(v, cmd)


def c_mvn(cmd, name, ctx):
    for w in cmd.args:
        v = (w.value or "").lower()
        if w.value is None:
            continue
        if v in ("deploy", "release:perform", "release:prepare", "site-deploy", "site:deploy", "deploy:deploy",
                 "deploy:deploy-file", "gpg:sign-and-deploy-file") or v.startswith(("wagon:", "scm:")):
            ctx.hold("mvn-deploy", HIGH, f"mvn {w.value} {PUBLISH}", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_gradle(cmd, name, ctx):
    for w in cmd.args:
        v = (w.value or "").lower()
        if w.value is not None and not v.startswith("-") and ("publish" in v or "upload" in v or "release" in v):
            ctx.hold("gradle-publish", HIGH, f"gradle {w.value} {PUBLISH}", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_make(cmd, name, ctx):
    args = list(cmd.args)
    for i, w in enumerate(args):
        v = w.value or ""
        if v in ("-C", "--directory") and i + 1 < len(args):
            sub = _with_cwd(cmd, args[i + 1], ctx)
            if sub is None:
                return
            cmd = sub
        elif v.startswith("--directory=") or (v.startswith("-C") and len(v) > 2):
            sub = _with_cwd(cmd, _w(w, v.split("=", 1)[1] if "=" in v else v[2:]), ctx)
            if sub is None:
                return
            cmd = sub
        elif "=" in v and not v.startswith("-"):
            key, _eq, val = v.partition("=")
            ctx.assignment(key, _w(w, val), cmd)
        elif v.startswith("--eval") or v == "-E":
            ctx.hold("make-eval", HIGH, "make --eval runs text the gate cannot read as commands", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_formatter(write_flags: tuple[str, ...] | None = None, takes: str = "", long_takes: tuple[str, ...] = ()):
    """black/isort/prettier --write/gofmt -w: the paths they are given are rewritten in place."""

    def check(cmd, name, ctx):
        options, pos = opts(cmd.args, takes, long_takes)
        ctx.in_project(cmd)
        if pos and name == "ruff" and pos[0].value in ("check", "format", "clean", "rule", "config", "linter",
                                                        "server", "version", "analyze"):
            pos = pos[1:]
        writes = write_flags is None or has(options, *write_flags)
        for w in pos:
            if writes:
                ctx.write(w, cmd)
            else:
                ctx.read(w, cmd)
        ctx.net([v for _o, v in options if v is not None], cmd)

    return check


def c_compiler(cmd, name, ctx):
    options, pos = opts(cmd.args, "oIDLlUdx", ("--output",))
    for v in values(options, "-o", "--output"):
        ctx.write(v, cmd)
    for w in cmd.args:
        if w.value is not None and w.value.startswith(("-fplugin", "-wrapper", "-B", "--plugin", "-specs")):
            ctx.hold("compiler-plugin", HIGH, f"{name} {w.value.split('=')[0]} loads or runs another program", cmd)
    ctx.in_project(cmd)
    ctx.net(pos, cmd)


def c_rake(cmd, name, ctx):
    for w in cmd.args:
        v = w.value or ""
        if v.startswith(("db:drop", "db:reset", "db:purge", "db:truncate", "db:schema:load", "db:setup")) or \
                v in ("console", "c", "runner", "r", "dbconsole", "db", "credentials:edit", "credentials:show"):
            ctx.hold("rails-" + v.split(":")[-1], HIGH, f"{name} {v} drops data, shows secrets or runs code it is "
                                                        "given", cmd)
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_pre_commit(cmd, name, ctx):
    pos = [w.value for w in cmd.args if w.value is None or not w.value.startswith("-")]
    if pos and pos[0] in ("install", "uninstall", "install-hooks", "init-templatedir", "try-repo", "sample-config"):
        if pos[0] in ("install", "uninstall", "init-templatedir"):
            ctx.hold("git-hooks", HIGH, f"pre-commit {pos[0]} writes .git/hooks", cmd)
            return
    ctx.in_project(cmd)
    ctx.net(cmd.args, cmd)


def c_docker(cmd, name, ctx):
    options, pos = opts(cmd.args, "H", ("--host", "--context", "--config", "--log-level"))
    if has(options, "-H", "--host", "--config", "--context"):
        ctx.hold("docker-host", HIGH, f"{name} talking to another daemon or config", cmd)
        return
    sub = pos[0].value if pos else None
    read = {"ps", "images", "logs", "inspect", "version", "info", "history", "port", "top", "search", "diff",
            "events", "stats"}
    groups = {"image": {"ls", "list", "inspect", "history"}, "container": {"ls", "list", "inspect", "logs", "top",
                                                                           "port", "diff", "stats"},
              "network": {"ls", "list", "inspect"}, "volume": {"ls", "list", "inspect"},
              "context": {"ls", "list", "show", "inspect"}, "system": {"df", "info", "events"},
              "compose": {"ps", "logs", "config", "ls", "images", "version", "top", "build", "pull", "events"},
              "buildx": {"build", "ls", "version", "inspect", "du"}, "manifest": {"inspect"},
              "builder": {"ls", "inspect", "build"}}
    if sub in read or (sub in ("build", "pull") and True):
        if sub == "stats" and not any(w.value == "--no-stream" for w in cmd.args):
            ctx.hold("docker", MEDIUM, f"{name} stats without --no-stream never ends", cmd)
        if sub == "build":
            ctx.in_project(cmd)
        return
    if sub in groups:
        words = [w.value for w in pos[1:] if w.value is None or not w.value.startswith("-")]
        if words and words[0] in groups[sub]:
            if words[0] == "build":
                ctx.in_project(cmd)
            return
        ctx.hold("docker", HIGH, f"{name} {sub} {words[0] if words else ''}: only its read commands pass", cmd)
        return
    ctx.hold("docker", HIGH, f"{name} {sub or ''}: containers and images can reach anything this user can "
                             "(only ps, images, logs, inspect, build, pull... pass)", cmd)


def c_kubectl(cmd, name, ctx):
    read = {"get", "describe", "logs", "explain", "version", "api-resources", "api-versions", "cluster-info", "top",
            "diff", "events", "auth", "config", "rollout", "wait", "completion", "plugin"}
    options, pos = opts(cmd.args, "nlcosLf", ("--namespace", "--selector", "--context", "--cluster", "--user",
                                             "--output", "--kubeconfig", "--server", "--token", "--field-selector",
                                             "--sort-by", "--container", "--since", "--tail", "--filename",
                                             "--template", "--request-timeout", "--as", "--as-group"))
    if has(options, "--server", "--token", "--kubeconfig", "--as", "--as-group"):
        ctx.hold("kubectl", HIGH, f"{name} with another server, token or identity", cmd)
        return
    words = [w.value for w in pos]
    sub = words[0] if words else None
    if sub not in read:
        ctx.hold(f"kubectl-{sub}" if sub else "kubectl", HIGH,
                 f"{name} {sub or ''} changes the cluster (only get, describe, logs... pass)", cmd)
        return
    if sub == "get" and any(w and (w.split("/")[0].split(".")[0] in ("secret", "secrets")) for w in words[1:]):
        ctx.hold("kubectl-secrets", HIGH, f"{name} get secrets shows secret values", cmd)
    if sub == "config" and (len(words) < 2 or words[1] not in ("view", "get-contexts", "current-context",
                                                                  "get-clusters", "get-users")):
        ctx.hold("kubectl-config", HIGH, f"{name} config {words[1] if len(words) > 1 else ''} changes ~/.kube/config",
                 cmd)
    if sub == "config" and len(words) > 1 and words[1] == "view" and any(w.value == "--raw" for w in cmd.args):
        ctx.hold("kubectl-secrets", HIGH, f"{name} config view --raw shows credentials", cmd)
    if sub == "rollout" and (len(words) < 2 or words[1] not in ("status", "history")):
        ctx.hold("kubectl-rollout", HIGH, f"{name} rollout {words[1] if len(words) > 1 else ''} changes the cluster",
                 cmd)
    if sub == "auth" and (len(words) < 2 or words[1] not in ("can-i", "whoami")):
        ctx.hold("kubectl", HIGH, f"{name} auth {words[1] if len(words) > 1 else ''}", cmd)
    if sub == "plugin" and (len(words) < 2 or words[1] != "list"):
        ctx.hold("kubectl", HIGH, f"{name} plugin", cmd)


def c_helm(cmd, name, ctx):
    read = {"list", "ls", "status", "get", "history", "hist", "show", "inspect", "template", "lint", "search",
            "version", "env", "verify"}
    pos = [w.value for w in cmd.args if w.value is None or not w.value.startswith("-")]
    sub = pos[0] if pos else None
    if sub in read:
        return
    if sub in ("repo", "dependency", "dep", "plugin") and len(pos) > 1 and pos[1] in ("list", "ls", "build",
                                                                                      "update", "up"):
        return
    ctx.hold(f"helm-{sub}" if sub else "helm", HIGH, f"helm {sub or ''} changes the cluster or the helm setup", cmd)


def c_terraform(cmd, name, ctx):
    held = {"apply": "changes real infrastructure", "destroy": "destroys real infrastructure",
            "import": "changes the state", "taint": "marks resources for replacement", "untaint": "changes the state",
            "refresh": "rewrites the state", "force-unlock": "breaks the state lock", "login": "stores a token",
            "logout": "removes a token", "console": "an interactive console", "push": "uploads configuration"}
    allowed = {"init", "validate", "plan", "fmt", "show", "output", "version", "providers", "graph", "state",
               "workspace", "get", "test", "metadata", "modules", "help"}
    args = [w for w in cmd.args if not (w.value or "").startswith("-chdir")]
    pos = [w.value for w in args if w.value is None or not w.value.startswith("-")]
    sub = pos[0] if pos else None
    if sub in held:
        ctx.hold(f"terraform-{sub}", HIGH, f"{name} {sub} {held[sub]}", cmd)
        return
    if sub not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"{name} {sub or ''} is not on the gate's allow-list", cmd)
        return
    if sub == "state" and (len(pos) < 2 or pos[1] not in ("list", "show", "pull")):
        ctx.hold("terraform-state", HIGH, f"{name} state {pos[1] if len(pos) > 1 else ''} rewrites the state", cmd)
    if sub == "workspace" and len(pos) > 1 and pos[1] == "delete":
        ctx.hold("terraform-workspace", HIGH, f"{name} workspace delete", cmd)
    ctx.in_project(cmd)


AWS_SECRETISH = re.compile(r"secret|password|token|credential|login|decrypt|private-key|kubeconfig|"
                           r"get-object$|authorization", re.I)


def c_aws(cmd, name, ctx):
    options, pos = opts(cmd.args, "", ("--profile", "--region", "--output", "--query", "--endpoint-url", "--color",
                                       "--cli-read-timeout", "--cli-connect-timeout", "--ca-bundle",
                                       "--cli-binary-format", "--starting-token", "--max-items", "--page-size"))
    for v in values(options, "--endpoint-url"):
        ctx.url(v, cmd)
    words = [w.value for w in pos]
    if len(words) < 2 or words[0] is None or words[1] is None:
        if words and words[0] in ("help", "--version"):
            return
        ctx.hold("aws", HIGH, "aws with a service or operation the gate cannot see", cmd)
        return
    service, op = words[0], words[1]
    if service == "s3":
        if op == "ls":
            return
        ctx.hold("aws-s3", HIGH, f"aws s3 {op} copies, moves or deletes data (only ls passes)", cmd)
        return
    if service == "configure":
        if op in ("list", "list-profiles"):
            return
        ctx.hold("aws-configure", HIGH, f"aws configure {op} reads or writes credentials", cmd)
        return
    if AWS_SECRETISH.search(op) or any(w.value == "--with-decryption" for w in cmd.args):
        ctx.hold("aws-secrets", HIGH, f"aws {service} {op} reveals secrets or writes files", cmd)
        return
    if op.startswith(("describe-", "list-", "get-", "head-", "lookup-", "search-", "batch-get-", "check-",
                      "validate-", "estimate-", "preview-", "test-")) or op in ("scan", "query", "wait", "help"):
        return
    ctx.hold(f"aws-{op}", HIGH, f"aws {service} {op} changes cloud resources (only describe-/list-/get- pass)", cmd)


GCLOUD_READ = {"list", "describe", "info", "version", "get-value", "get-iam-policy", "read", "list-tags",
               "list-grantable-roles", "help", "topic"}
GCLOUD_HELD = {"delete", "remove", "destroy", "reset", "set", "unset", "create", "update", "deploy", "ssh", "scp",
               "print-access-token", "print-identity-token", "activate-service-account", "login", "revoke",
               "add-iam-policy-binding", "remove-iam-policy-binding", "set-iam-policy", "import", "export", "cp",
               "mv", "rm", "rsync", "patch", "enable", "disable", "stop", "start", "resize", "suspend", "resume",
               "restore", "rollback", "run", "exec", "submit", "cancel", "get-credentials", "configure-docker",
               "execute", "call", "send", "publish", "apply", "upgrade", "application-default", "clone", "init",
               "rb", "mb", "setmeta", "acl", "iam", "cat"}


def c_cloud_cli(cmd, name, ctx):
    """gcloud, gsutil, az: held when any word is a verb that changes or reveals; passes when one reads."""
    words = [w.value for w in cmd.args if w.value is None or not w.value.startswith("-")]
    if any(w is None for w in words):
        ctx.hold(name, HIGH, f"{name} with a word only known when it runs", cmd)
        return
    bad = [w for w in words if w in GCLOUD_HELD]
    if name == "gsutil" and words and words[0] in ("ls", "du", "stat", "version", "help", "hash"):
        return
    if bad:
        ctx.hold(f"{name}-{bad[0]}", HIGH, f"{name} ... {bad[0]} changes cloud resources or reveals credentials", cmd)
        return
    if any(w in GCLOUD_READ or (w.startswith(("get-", "show", "list")) and name == "az") or
           (name == "az" and w == "show") for w in words):
        return
    ctx.hold(name, HIGH, f"{name} {' '.join(words[:4])}: only list/describe/show pass", cmd)


# -- databases -----------------------------------------------------------------------------------------------
SQL_UNSAFE = [
    (re.compile(r"\b(?:drop|truncate)\b", re.I), "SQL DROP/TRUNCATE deletes data"),
    (re.compile(r"\bdelete\s+from\b", re.I), "SQL DELETE removes rows"),
    (re.compile(r"\b(?:grant|revoke)\b", re.I), "SQL GRANT/REVOKE changes who may do what"),
    (re.compile(r"\bcopy\b[^;]*\b(?:to|from)\s+program\b", re.I), "COPY ... PROGRAM runs a command on the server"),
    (re.compile(r"\binto\s+(?:out|dump)file\b", re.I), "INTO OUTFILE writes a file on the server"),
    (re.compile(r"\bload\s+data\b", re.I), "LOAD DATA reads files into the database"),
    (re.compile(r"\battach\b", re.I), "ATTACH opens or creates another database file"),
    (re.compile(r"\bvacuum\s+into\b", re.I), "VACUUM INTO writes a file"),
    (re.compile(r"\bload_extension\s*\(|\binstall\s+\w+|\bload\s+\w+\s*;", re.I), "loads an extension (code)"),
    (re.compile(r"\bcopy\b[^;]*\bto\s+'", re.I), "COPY ... TO writes a file"),
    (re.compile(r"(?:^|\n|;)\s*\\(?:!|o\b|out\b|w\b|g\s*\||gexec|setenv|lo_export|copy\b[^\n]*\bto\b)", re.I),
     "a psql meta-command that runs a shell command or writes a file"),
    (re.compile(r"(?:^|\n|;)\s*(?:system\s|\\!|tee\s)", re.I), "a mysql command that runs a shell command or writes"),
    (re.compile(r"(?:^|\n)\s*\.(?:shell|system|output|once|save|backup|restore|load|excel|open|cd|log|trace|import)\b",
                re.I), "a sqlite3 dot-command that runs a command or touches files"),
    (re.compile(r"\bpg_read_file\b|\bpg_read_binary_file\b|\blo_import\b|\blo_export\b", re.I),
     "reads or writes files on the server"),
]


def sql_unsafe(sql: str) -> str | None:
    for pattern, why in SQL_UNSAFE:
        if pattern.search(sql):
            return why
    return None


def c_sql(cmd, name, ctx):
    takes = {"psql": "cfhpUdovPFRTLsS", "mysql": "ehuPDSpOo", "mariadb": "ehuPDSpOo", "sqlite3": "", "duckdb": "cs"}
    long_takes = ("--command", "--file", "--host", "--port", "--username", "--dbname", "--output", "--set",
                  "--variable", "--pset", "--field-separator", "--record-separator", "--table-attr", "--log-file",
                  "--execute", "--user", "--database", "--socket", "--init-command", "--tee", "--pager")
    args = list(cmd.args)
    sqls, files = [], []
    if name in ("sqlite3", "duckdb"):
        i = 0
        rest = []
        while i < len(args):
            v = args[i].value
            if v is not None and v.startswith("-") and v != "-":
                key = v.lstrip("-")
                if key in ("cmd", "c", "s") and i + 1 < len(args):
                    sqls.append(args[i + 1])
                    i += 2
                    continue
                if key in ("init",) and i + 1 < len(args):
                    files.append(args[i + 1])
                    i += 2
                    continue
                if key in ("separator", "newline", "nullvalue", "vfs", "maxsize", "mmap", "lookaside", "pagecache",
                           "heap", "A") and i + 1 < len(args):
                    i += 2
                    continue
                if key == "readonly":
                    pass
                i += 1
                continue
            rest.append(args[i])
            i += 1
        if rest:
            db = rest[0]
            if db.value not in (":memory:", ""):
                if any(w.value in ("-readonly", "--readonly") for w in args):
                    ctx.read(db, cmd)
                else:
                    ctx.write(db, cmd)
            sqls.extend(rest[1:])
    else:
        options, _pos = opts(args, takes.get(name, ""), long_takes)
        for o, v in options:
            if v is None:
                continue
            if o in ("-c", "--command", "-e", "--execute", "--init-command"):
                sqls.append(v)
            elif o in ("-f", "--file"):
                files.append(v)
            elif o in ("-o", "--output", "-L", "--log-file", "--tee"):
                ctx.write(v, cmd)
            elif o == "--pager":
                ctx.hold("sql-unsafe", HIGH, f"{name} --pager runs a command", cmd)
    for s in sqls:
        if s.value is None:
            ctx.hold("sql-unsafe", HIGH, f"SQL only known when it runs ({s.text[:60]})", cmd)
            continue
        why = sql_unsafe(s.value)
        if why:
            ctx.hold("sql-drop-truncate", HIGH, why, cmd)
    for f in files:
        ctx.read(f, cmd)
        ctx.inside(f, cmd, f"{name} runs an SQL file outside the project")
    feed = cmd.stdin
    if feed is not None and not sqls and not files:
        if feed.kind in ("heredoc", "herestring"):
            if feed.text is None:
                ctx.hold("sql-unsafe", HIGH, f"SQL on standard input that expands when it runs", cmd)
            else:
                why = sql_unsafe(feed.text)
                if why:
                    ctx.hold("sql-drop-truncate", HIGH, why, cmd)
        elif feed.kind == "pipe":
            ctx.hold("sql-unsafe", HIGH, f"{name} runs SQL{_fed(cmd)}, which the gate cannot see", cmd)


# -- shell built-ins with a twist -------------------------------------------------------------------------------
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


def held(rule: str, reason: str, risk: str = HIGH):
    def check(cmd, name, ctx):
        ctx.hold(rule, risk, reason.format(name=name), cmd)

    return check


READ_SIMPLE = reads()
TABLE = {
    # touch nothing through their arguments
    **{n: pure for n in ("echo", "printf", "true", "false", ":", "test", "[", "[[", "sleep", "seq", "yes", "pwd",
                          "whoami", "id", "uname", "basename", "dirname", "printenv", "which", "type", "shift",
                          "exit", "return", "break", "continue", "wait", "read", "getopts", "umask", "ulimit",
                          "jobs", "expr", "let", "nproc", "arch", "locale", "uptime", "free", "groups", "logname",
                          "tty", "clear", "export", "declare", "local", "readonly", "typeset", "unset", "tput",
                          "mapfile", "readarray", "whereis", "cal", "factor", "numfmt", "tr", "lsb_release",
                          "sw_vers", "getconf", "dirs", "disown", "fg", "bg", "times", "history", "caller", "compgen",
                          "df", "lsof", "pgrep", "ps", "pstree", "vmstat", "iostat", "w", "who", "users", "lscpu",
                          "lsblk", "uuidgen", "man", "apropos", "whatis", "nvidia-smi", "mktemp", "cd", "pushd",
                          "popd", "chdir")},
    "date": c_date, "hostname": c_hostname, "hash": c_hash, "set": c_set,
    # read the files they are given
    **{n: READ_SIMPLE for n in ("cat", "tac", "nl", "rev", "fold", "fmt", "paste", "comm", "expand", "unexpand",
                                 "strings", "file", "stat", "md5sum", "sha1sum", "sha224sum", "sha256sum",
                                 "sha384sum", "sha512sum", "shasum", "cksum", "b2sum", "sum", "readlink",
                                 "realpath", "zcat", "bzcat", "xzcat", "zstdcat", "lzcat", "less", "more", "look",
                                 "wc", "cmp", "hexdump", "od", "tsort", "ldd", "nm", "objdump", "readelf", "size",
                                 "lsattr", "getfacl", "otool", "shellcheck", "yamllint", "jsonlint", "xmllint",
                                 "markdownlint", "hadolint", "cloc", "tokei", "scc", "bat", "batcat", "delta",
                                 "difft", "colordiff", "zless", "zmore", "csvlook", "pygmentize", "identify",
                                 "exiftool", "pdfinfo", "bc", "dc", "md5", "sha256", "column")},
    "cut": reads("dfcb", ("--delimiter", "--fields", "--characters", "--bytes", "--output-delimiter")),
    "head": reads("nc", ("--lines", "--bytes")), "tail": reads("ncsF", ("--lines", "--bytes", "--sleep-interval",
                                                                          "--pid", "--max-unchanged-stats")),
    "du": reads("dBt", ("--max-depth", "--block-size", "--threshold", "--exclude", "--time-style", "--files0-from"),
                default_here=True, recursive="-a --all -s --summarize -d --max-depth -h -c"),
    "tree": reads("LIPoH", ("--filelimit", "--timefmt", "--sort", "--charset"), default_here=True,
                  writes_opts=("-o",)),
    "diff": reads("UCIxXSFL", ("--unified", "--context", "--ignore-matching-lines", "--exclude", "--exclude-from",
                               "--starting-file", "--show-function-line", "--label", "--from-file", "--to-file",
                               "--line-format", "--color", "--palette", "--width", "--tabsize", "--horizon-lines"),
                  recursive="-r --recursive"),
    "join": reads("12ajotev", ()), "split": held("unknown-command", "{name} writes files named by a prefix", MEDIUM),
    "ls": c_ls, "dir": c_ls, "vdir": c_ls, "exa": c_ls, "eza": c_ls, "lsd": c_ls,
    "find": c_find, "fd": c_fd, "fdfind": c_fd,
    "grep": c_grep, "egrep": c_grep, "fgrep": c_grep, "zgrep": c_grep, "rg": c_rg, "ag": c_rg, "ack": c_rg,
    "git-grep": c_grep,
    "sort": c_sort, "uniq": c_uniq, "jq": c_jq, "yq": c_yq, "gojq": c_jq, "xxd": c_xxd, "iconv": c_iconv,
    "base64": c_base64, "base32": c_base64, "basenc": c_base64,
    # write inside the project
    "cp": c_cp, "mv": c_mv, "rm": c_rm, "ln": c_ln, "tee": c_tee, "dd": c_dd, "truncate": c_truncate,
    "install": c_install,
    "mkdir": c_paths_written("m", ("--mode", "--context")), "rmdir": c_paths_written(),
    "touch": c_paths_written("drt", ("--date", "--reference"), ref_opts=("-r", "--reference")),
    "chmod": c_chmod, "chown": c_paths_written("", ("--reference", "--from"), skip_first=True),
    "chgrp": c_paths_written("", ("--reference",), skip_first=True),
    "unlink": c_paths_written(), "shred": held("shred", "{name} destroys file contents beyond recovery"),
    "tar": c_tar, "unzip": c_unzip, "zip": c_zip, "patch": c_patch,
    **{n: c_compress for n in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "pigz",
                                "brotli", "compress", "uncompress")},
    "sed": c_sed, "gsed": c_sed, "awk": c_awk, "gawk": c_awk, "mawk": c_awk, "nawk": c_awk,
    # run another command
    "env": c_env, "nice": c_wrapper("n", ("--adjustment",)), "nohup": c_wrapper(),
    "timeout": c_wrapper("sk", ("--signal", "--kill-after"), positional_before=1),
    "gtimeout": c_wrapper("sk", ("--signal", "--kill-after"), positional_before=1),
    "time": c_wrapper("fo", ("--format", "--output")), "stdbuf": c_wrapper("ioe", ("--input", "--output", "--error")),
    "ionice": c_wrapper("cnp", ("--class", "--classdata", "--pid")), "command": c_command, "builtin": c_command,
    "xargs": c_xargs, "npx": c_npx, "bunx": c_npx, "pnpx": c_npx, "uvx": c_uvx,
    "pipx": c_pipx,
    # interpreters
    **{n: c_shell for n in SHELLS},
    "python": c_python, "pypy": c_python, "pypy3": c_python,
    "node": c_interpreter("ep", ("--eval", "--print"), "rC", ("--require", "--import", "--loader",
                                                                "--experimental-loader", "--input-type",
                                                                "--env-file", "--conditions", "--inspect-port")),
    "nodejs": c_interpreter("ep", ("--eval", "--print"), "rC", ("--require", "--import", "--loader")),
    "tsx": c_interpreter("ep", ("--eval", "--print"), "r", ("--require", "--import", "--tsconfig")),
    "ts-node": c_interpreter("ep", ("--eval", "--print"), "rP", ("--require", "--project")),
    "deno": c_deno,
    "perl": c_interpreter("eE", (), "IMmxCd", ()),
    "ruby": c_interpreter("e", (), "IrCxE", ("--encoding",)),
    "php": c_interpreter("raBRFEs", (), "cdzt", ()),
    "lua": c_interpreter("e", (), "l", ()), "luajit": c_interpreter("e", (), "l", ()),
    "Rscript": c_interpreter("e", ("--expr",), "", ()), "R": held("interpreter-stdin", "{name} is interactive"),
    "elixir": c_interpreter("e", ("--eval",), "r", ("--require",)),
    "java": c_interpreter("", (), "", ("-cp", "-classpath", "--class-path", "--module-path", "-p", "--add-modules",
                                        "-jar"), no_script_ok=("--version", "-version", "--help", "-help")),
    "source": c_source, ".": c_source,
    # version control and the network
    "git": c_git, "curl": c_curl, "wget": c_wget, "dig": c_dns, "nslookup": c_dns, "host": c_dns, "gh": c_gh,
    # package managers and build tools
    "npm": c_npm, "pnpm": c_js_pm, "yarn": c_js_pm, "bun": c_js_pm,
    "pip": c_pip, "uv": c_uv,
    "poetry": subcommands({"install", "add", "remove", "update", "lock", "show", "build", "check", "version", "init",
                           "new", "export", "env", "about", "list", "search", "sync", "help"},
                          {"publish": PUBLISH, "shell": "an interactive shell", "config": "changes poetry's "
                           "configuration", "self": "changes poetry itself", "source": "changes where packages "
                           "come from"}, runners=("run",)),
    "pipenv": subcommands({"install", "lock", "graph", "check", "sync", "update", "uninstall", "clean", "requirements",
                           "verify", "scripts", "--venv", "--where", "--py"}, {"shell": "an interactive shell"},
                          runners=("run",)),
    "pdm": subcommands({"install", "add", "remove", "update", "lock", "sync", "list", "show", "build", "init", "info",
                        "venv", "export", "outdated", "search"}, {"publish": PUBLISH, "self": "changes pdm itself",
                                                                  "config": "changes pdm's configuration"},
                       runners=("run",)),
    "hatch": subcommands({"build", "env", "version", "status", "new", "fmt", "test", "dep", "project"},
                         {"publish": PUBLISH, "shell": "an interactive shell", "self": "changes hatch itself",
                          "config": "changes hatch's configuration"}, runners=("run",)),
    "cargo": c_cargo, "go": c_go, "gofmt": c_formatter(("-w",)), "rustfmt": c_formatter(),
    "rustc": c_compiler, "gcc": c_compiler, "g++": c_compiler, "cc": c_compiler, "c++": c_compiler,
    "clang": c_compiler, "clang++": c_compiler, "javac": tool(), "kotlinc": tool(), "scalac": tool(),
    "mvn": c_mvn, "mvnw": c_mvn, "gradle": c_gradle, "gradlew": c_gradle, "make": c_make, "gmake": c_make,
    "cmake": tool(), "ninja": tool(), "meson": tool(), "ctest": tool(), "bazel": tool(), "bazelisk": tool(),
    "dotnet": subcommands({"build", "test", "run", "restore", "format", "clean", "new", "add", "remove", "list", "sln",
                           "pack", "watch", "--info", "--version", "--list-sdks", "help", "msbuild"},
                          {"nuget": "pushes or changes packages", "tool": "installs tools outside the project",
                           "ef": "can drop or change the database", "publish": "publishes the app"}),
    "swift": subcommands({"build", "test", "run", "package", "--version"}),
    "gem": subcommands({"list", "search", "info", "env", "contents", "which", "specification", "spec", "install",
                        "outdated", "dependency", "help", "query", "build"},
                       {"push": PUBLISH, "yank": "changes a published gem", "owner": "changes who owns a gem",
                        "signin": "logs in", "signout": "logs out"}, cwd=False),
    "bundle": subcommands({"install", "update", "check", "list", "show", "outdated", "lock", "init", "add",
                           "package", "info", "doctor", "binstubs", "platform"},
                          {"config": "changes bundler's configuration", "console": "an interactive console",
                           "open": "opens an editor"}, runners=("exec",)),
    "bundler": subcommands({"install", "update", "check", "list", "show", "outdated", "lock", "init", "add"},
                           runners=("exec",)),
    "composer": subcommands({"install", "update", "require", "remove", "dump-autoload", "dumpautoload", "show",
                             "outdated", "validate", "run-script", "run", "test", "init", "why", "depends", "audit",
                             "check-platform-reqs", "diagnose", "licenses", "fund", "status", "search", "suggests"},
                            {"exec": "runs a vendored program", "global": "installs outside the project",
                             "config": "changes composer's configuration"}),
    "rake": c_rake, "rails": c_rake, "rspec": tool(), "mix": tool(), "rebar3": tool(), "stack": tool(),
    "cabal": tool(), "zig": tool(), "elm": tool(), "sbt": tool(), "lein": tool(), "clojure": tool(), "dune": tool(),
    "opam": subcommands({"install", "list", "show", "switch", "env", "update", "upgrade", "exec", "pin", "search",
                         "config"}),
    # test runners, linters, type checkers (they run and write inside the project)
    **{n: tool() for n in ("pytest", "py.test", "tox", "nox", "mypy", "pyright", "basedpyright", "flake8", "pylint",
                            "pyflakes", "pycodestyle", "pydocstyle", "bandit", "vulture", "coverage", "hypothesis",
                            "tsc", "jest", "vitest", "mocha", "ava", "tap", "eslint", "tslint", "stylelint", "next",
                            "vite", "webpack", "rollup", "esbuild", "swc", "turbo", "nx", "lerna", "parcel", "astro",
                            "nuxt", "ng", "playwright", "cypress", "storybook", "sphinx-build", "hugo", "jekyll",
                            "golangci-lint", "staticcheck", "govulncheck", "ginkgo", "gotestsum", "rubocop",
                            "phpunit", "phpstan", "psalm", "pint", "ktlint", "detekt", "swiftlint", "swiftformat",
                            "clang-tidy", "cppcheck", "cpplint", "semgrep", "actionlint", "flit",
                            "maturin", "buf", "protoc", "sqlc", "wasm-pack", "trunk", "biome", "oxlint", "knip",
                            "depcheck", "madge", "tsup", "unbuild", "nodemon", "typos", "codespell")},
    "mkdocs": subcommands({"build", "serve", "new", "get-deps", "--version"}, {"gh-deploy": PUBLISH}),
    "pre-commit": c_pre_commit,
    "black": c_formatter(), "isort": c_formatter(), "autopep8": c_formatter(("-i", "--in-place")),
    "yapf": c_formatter(("-i", "--in-place")), "ruff": c_formatter(), "prettier": c_formatter(("--write", "-w")),
    "clang-format": c_formatter(("-i",)), "shfmt": c_formatter(("-w", "--write")),
    "dprint": c_formatter(), "stylua": c_formatter(), "taplo": c_formatter(),
    # containers and clouds: their read commands
    "docker": c_docker, "podman": c_docker, "kubectl": c_kubectl, "oc": c_kubectl, "helm": c_helm,
    "terraform": c_terraform, "tofu": c_terraform, "terragrunt": c_terraform,
    "aws": c_aws, "gcloud": c_cloud_cli, "gsutil": c_cloud_cli, "az": c_cloud_cli,
    # databases: SQL that drops, truncates, deletes or escapes to a shell is held
    "psql": c_sql, "mysql": c_sql, "mariadb": c_sql, "sqlite3": c_sql, "duckdb": c_sql,
    # always held, whatever the arguments
    "sudo": held("sudo", "{name} runs a command as another user"), "su": held("sudo", "{name} switches user"),
    "doas": held("sudo", "{name} runs a command as another user"), "pkexec": held("sudo", "{name} runs as root"),
    "runuser": held("sudo", "{name} runs as another user"), "chroot": held("sudo", "{name} needs root"),
    "eval": held("eval", "eval runs a string as shell commands the gate cannot read"),
    "exec": held("exec", "exec replaces the shell (or rewires its descriptors for everything after)"),
    "trap": held("trap", "trap runs a string as commands later"),
    "alias": held("alias", "alias changes what a command name runs"),
    "enable": held("alias", "enable loads or hides shell built-ins"),
    "shopt": held("alias", "shopt changes how the shell expands what follows"),
    "watch": held("shell-c", "watch runs its arguments through sh -c"),
    "parallel": held("shell-c", "parallel runs its arguments as shell commands"),
    "kill": held("kill", "kill stops processes the gate cannot tell apart", MEDIUM),
    "pkill": held("kill", "pkill stops processes by name", MEDIUM),
    "killall": held("kill", "killall stops processes by name", MEDIUM),
    "ssh": held("remote", "ssh runs commands on another machine"),
    "scp": held("data-upload", "scp copies files to or from another machine"),
    "sftp": held("data-upload", "sftp copies files to or from another machine"),
    "rsync": held("data-upload", "rsync copies files, possibly to another machine or outside the project"),
    "nc": held("data-upload", "nc opens raw network connections"), "ncat": held("data-upload", "ncat opens raw "
                                                                                 "network connections"),
    "socat": held("data-upload", "socat relays data anywhere"), "telnet": held("data-upload", "telnet"),
    "crontab": held("persistence", "crontab schedules commands to run later"),
    "at": held("persistence", "at schedules commands to run later"),
    "systemctl": held("persistence", "systemctl starts and changes services"),
    "launchctl": held("persistence", "launchctl starts and changes services"),
    "mkfs": held("disk", "mkfs erases a file system"), "fdisk": held("disk", "fdisk changes partitions"),
    "mount": held("disk", "mount changes the file system tree"), "umount": held("disk", "umount"),
    "shutdown": held("power", "shutdown"), "reboot": held("power", "reboot"), "halt": held("power", "halt"),
    "osascript": held("interpreter-c", "osascript runs AppleScript"),
    "open": held("open", "open hands a file or URL to another program", MEDIUM),
    "xdg-open": held("open", "xdg-open hands a file or URL to another program", MEDIUM),
    "ars": held("ars", "ars commands decide and configure supervision: a person runs them"),
}


_NORMAL: dict[str, str] = {}


def normalize(name: str) -> str:
    """python3.11 -> python, pip3 -> pip, g++-12 -> g++; the table's spelling."""
    found = _NORMAL.get(name)
    if found is None:
        found = _NORMAL[name] = _normalize(name) if len(_NORMAL) < 4096 else name
    return found


def _normalize(name: str) -> str:
    base = name
    m = re.fullmatch(r"(python|pip|pypy|ruby|perl|php|node|lua|gcc|g\+\+|clang|clang\+\+|cc)[0-9][0-9.]*(?:-[0-9.]+)?",
                     base)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(gcc|g\+\+|clang|clang\+\+|cpp)-[0-9.]+", base)
    if m:
        return m.group(1)
    return base


def check(cmd, ctx) -> None:
    """Hold ``cmd`` (through ``ctx.hold``) unless it is on the allow-list with arguments it allows."""
    w = cmd.name
    if w is None:
        return
    if w.value is None:
        ctx.hold("dynamic-command", HIGH, f"the command itself is only known when it runs ({w.text[:80]})", cmd)
        return
    name = w.value
    if w.glob:
        ctx.hold("dynamic-command", HIGH, f"the command name is a pattern ({name[:80]})", cmd)
        return
    if "/" in name:
        name = ctx.program(cmd, name)
        if name is None:
            return
    if name in ctx.functions:
        return  # its body was checked where it was defined
    name = normalize(name)
    if name in ctx.extra_commands:
        ctx.net(cmd.args, cmd)
        return
    if name == "gh" and cmd.args and cmd.args[0].value == "api":
        return c_gh_api(cmd, name, ctx)
    checker = TABLE.get(name)
    if checker is None:
        ctx.hold("unknown-command", MEDIUM, f"{name[:80]} is not on the gate's allow-list", cmd)
        return
    checker(cmd, name, ctx)
