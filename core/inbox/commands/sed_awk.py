"""sed and awk: their programs can write files and run commands, so the
program text is read for ``w``, ``e``, ``system()``, pipes and redirections."""

from __future__ import annotations

import re

from core.inbox.commands.options import HIGH, has, opts, values, word_like


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
                scripts.append(word_like(w, val) if eq else (args[i] if i < len(args) else word_like(w, "")))
                i += 0 if eq else 1
            elif key == "--file":
                from_file = True
                f = word_like(w, val) if eq else (args[i] if i < len(args) else None)
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
                    val = word_like(w, rest) if rest else (args[i] if i < len(args) else word_like(w, ""))
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
