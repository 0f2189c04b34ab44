"""Commands that write files (cp, mv, rm, chmod, ln, tee, dd, archives, patch...):
only inside the project, never recursive deletes."""

from __future__ import annotations

import re

from core.inbox.commands.options import HIGH, MEDIUM, has, opts, values, word_like


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
                ctx.read(word_like(w, v.split("=", 1)[1]), cmd)
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
        sources, dests = pos, [word_like(pos[0], "./")]
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
            ctx.write(word_like(w, val), cmd)
        elif key == "if":
            ctx.read(word_like(w, val), cmd)


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
            expanded.append(word_like(args[0], "-" + ch))
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
            ctx.read(w if base is None else join_word(base, w), cmd, recursive=True)
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


def join_word(base, w):
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
