"""Commands that read files: listing, finding and searching, sorting, jq and yq
(with the options that make them write or run something held)."""

from __future__ import annotations

from core.inbox.commands.options import HIGH, MEDIUM, has, opts, values, word_like


def c_ls(cmd, name, ctx):
    options, pos = opts(cmd.args, "IwT", ("--hide", "--ignore", "--width", "--tabsize", "--format", "--sort",
                                          "--time", "--time-style", "--color", "--block-size", "--quoting-style"))
    for w in pos or [word_like(cmd.name, ".")]:
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
    for w in roots or [word_like(cmd.name, ".")]:
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
    for w in (pos[1:] if pos else []) or [word_like(cmd.name, ".")]:
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
        pos = [word_like(cmd.name, ".")]
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
    for w in pos or [word_like(cmd.name, ".")]:
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
