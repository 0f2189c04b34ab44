"""Database clients: a query passes when it only reads."""

from __future__ import annotations

import re

from core.inbox.commands.interpreters import fed_text
from core.inbox.commands.options import HIGH, opts


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
            ctx.hold("sql-unsafe", HIGH, f"{name} runs SQL{fed_text(cmd)}, which the gate cannot see", cmd)
