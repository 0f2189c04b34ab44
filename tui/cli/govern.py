"""``ars forget`` and ``ars export`` (core/govern): memory the supervisor governs.

Forgetting is the supervisor's decision: with a supervisor key it asks for
the passphrase (the terminal, or ``--passphrase-fd N``) and the tombstone
carries the signature; an agent asks for it through the inbox (MCP
``request_forget``), and the supervisor runs ``ars forget`` after reading it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from tui.cli.common import JsonTextOpt as JsonOpt
from tui.cli.common import StateOpt, fail, open_ars, out
from tui.cli.supervisor import PassFdOpt, signer_for




def _confirm(prompt: str) -> bool:
    """A yes from the person's terminal (never stdin: an agent's tool has one)."""
    try:
        with open("/dev/tty", "r+") as tty:
            tty.write(prompt)
            tty.flush()
            return tty.readline().strip().lower() in ("y", "yes")
    except OSError:
        fail("forget needs a confirmation on a terminal: run it on yours, or add --yes after checking "
              "the list with --dry-run")
    return False


def forget_command(
    episode_ids: Annotated[Optional[List[str]], typer.Argument(help="episode ids to forget (as `ars recall --json` prints them)")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="forget every episode of this session")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="forget every episode read from this raw file "
                                                                   "(the file is never scanned again)")] = None,
    query: Annotated[Optional[str], typer.Option("--query", help="forget what recall returns for these words "
                                                                 "(listed first, asks for confirmation)")] = None,
    why: Annotated[str, typer.Option("--why", help="why (kept in the tombstone; never the forgotten text)")] = "",
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation (scripts)")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list what would go, change nothing")] = False,
    state: StateOpt = None, as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None,
) -> None:
    """Forget memories everywhere ARS wrote them: ledger, SQLite, vectors, raw-file scan, checkpoints;
    Neo4j at the next sync and every team host at its next pull."""
    from core.errors import BadQuery
    from core.api import ForgetFailed

    with open_ars(state) as ars:
        try:
            sel = ars.forget_select(episode_ids or [], session=session, source=source, query=query)
        except BadQuery as exc:
            fail(str(exc), 1 if "unknown episode id" in str(exc) or "no episode" in str(exc) else 2)
        if dry_run or not as_json or not yes:
            for p in sel.preview:
                where = f" [{p['host']}]" if p.get("host") and p["host"] != ars.identity.host else ""
                print(f"  {p['id']}{where}  {p['summary']}", file=sys.stderr if as_json else sys.stdout)
        if dry_run:
            print(f"{len(sel.ids)} episodes would be forgotten (--dry-run: nothing changed)",
                  file=sys.stderr if as_json else sys.stdout)
            return
        needs_yes = bool(query is not None or session is not None or source is not None)
        if needs_yes and not yes and not _confirm(f"forget these {len(sel.ids)} episodes everywhere? [y/N] "):
            fail("nothing was forgotten (not confirmed)", 1)
        signer = signer_for(ars, passphrase_fd, "forget")
        try:
            report = ars.forget(sel, why=why, signer=signer)
        except ForgetFailed as exc:
            fail(str(exc), 1)
        except BadQuery as exc:
            fail(str(exc))
    if as_json:
        out.print_json(json.dumps(report.as_dict()))
        return
    print(f"forgot {len(report.ids)} episodes ({report.event_id}; decided by {report.decided_by})")
    for where, what in report.removed.items():
        print(f"  removed from {where}: {what}")
    for line in report.pending_on_peers:
        print(f"  still to go: {line}")


def export_command(
    fmt: Annotated[str, typer.Option("--format", help="jsonl (re-ingestable: ars ingest --format episodes) or markdown")] = "jsonl",
    since: Annotated[Optional[str], typer.Option("--since", help="only episodes from this date on (ISO 8601)")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="only this session")] = None,
    scope: Annotated[Optional[str], typer.Option("--scope", help="only these origins: agent=NAME,host=NAME")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="write here (else stdout)")] = None,
    audit: Annotated[bool, typer.Option("--audit", help="the supervisor's audit instead: every request, who "
                                                        "decided it when, the signature, what happened next")] = False,
    state: StateOpt = None,
) -> None:
    """The episodes as they are now (forgotten ones excluded); --audit: every request's record."""
    from core.errors import BadQuery
    from core.api import atomic_write

    with open_ars(state) as ars:
        try:
            lines = _audit_lines(ars, fmt, since) if audit else ars.export(fmt, since=since, session=session,
                                                                          scope=scope)
            if output is None:
                n = 0
                for line in lines:
                    sys.stdout.write(line)
                    n += 1
                sys.stdout.flush()
            else:
                text = "".join(lines)
                try:
                    atomic_write(output, text)
                except OSError as exc:
                    fail(f"cannot write {output} ({exc.strerror or exc}): choose another --output", 1)
        except BadQuery as exc:
            fail(str(exc))


def _audit_lines(ars, fmt: str, since: str | None):
    """``ars export --audit``: each request's record (core/inbox/audit.py), one JSON object a
    line, or the same words ``ars inbox show`` prints (markdown)."""
    from core.api import audit_text
    from core.errors import BadQuery

    if fmt not in ("jsonl", "markdown"):
        raise BadQuery(f"unknown --format {fmt!r}: choose jsonl or markdown")
    from tui.cli.inbox import _since

    records = ars.inbox_audit(since=_since(since))
    if fmt == "jsonl":
        return [json.dumps({**rec.request.model_dump(mode="json"), "outcome": rec.outcome,
                            "audit": rec.model_dump(mode="json", exclude={"request"})}, ensure_ascii=False) + "\n"
                for rec in records]
    return ["# ARS audit\n\n", *(f"## {rec.request.id}\n\n```\n{audit_text(rec)}\n```\n\n" for rec in records)]


def redact_command(
    scan: Annotated[bool, typer.Option("--scan", help="find secrets already stored and rewrite them as "
                                                       "placeholders everywhere (ledger, SQLite, vectors, checkpoints)")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list what would be rewritten, change nothing")] = False,
    state: StateOpt = None, as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None,
) -> None:
    """Secrets in memory: `ars redact --scan` takes those an older ARS stored out of every file."""
    from core.api import ForgetFailed

    if not scan:
        fail("say what to do: `ars redact --scan` (add --dry-run to only list)")
    with open_ars(state) as ars:
        signer = None if dry_run else signer_for(ars, passphrase_fd, "rewrite stored secrets")
        try:
            report = ars.redact_scan(dry_run=dry_run, signer=signer)
        except (OSError, ForgetFailed) as exc:
            fail(f"redact --scan could not finish ({getattr(exc, 'strerror', None) or exc}): fix that, then run "
                  "any ars command: it finishes the rewrite", 1)
    if as_json:
        out.print_json(json.dumps(report.as_dict()))
        return
    kinds = ", ".join(f"{k} x{n}" for k, n in sorted(report.kinds.items())) or "none"
    verb = "would rewrite" if dry_run else "rewrote"
    print(f"scanned {report.scanned} episodes: {verb} {len(report.episodes)} holding secrets ({kinds})")
    for eid in report.episodes[:50]:
        print(f"  {eid}")
    for where, what in report.removed.items():
        print(f"  {where}: {what}")
    for line in report.pending_on_peers:
        print(f"  still to go: {line}")
