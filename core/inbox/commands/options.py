"""Reading a command's arguments: options (short clusters, ``--long=value``,
``--``), their values, and literal words."""

from __future__ import annotations


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
                out.append((name, word_like(w, val)))
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
                    out.append(("-" + ch, word_like(w, rest)))
                elif i < n:
                    out.append(("-" + ch, args[i]))
                    i += 1
                else:
                    out.append(("-" + ch, None))
                break
            out.append(("-" + ch, None))
            j += 1
    return out, pos


def word_like(like, value: str):
    return type(like)(value, value)


def has(options, *names: str) -> bool:
    return any(name in names for name, _v in options)


def values(options, *names: str) -> list:
    return [v for name, v in options if name in names and v is not None]


def _lit(words) -> list[str]:
    return [w.value for w in words if w.value is not None]


def sub_command(cmd, args, name_value: str | None = None):
    """A command run by another (env X, xargs X, npx X): same place and input."""
    name = args[0] if name_value is None else word_like(args[0], name_value)
    sub = type(cmd)(name, cmd.text, cmd.cwd, cmd.context)
    sub.args = list(args[1:])
    sub.stdin = cmd.stdin
    return sub


def _first_word(cmd) -> str:
    return cmd.args[0].value if cmd.args and cmd.args[0].value is not None else ""
