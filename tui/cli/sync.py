"""``ars sync``: the deferred consumers (Neo4j, embeddings, the team pull): status, run, pull, backfill."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer
from rich.markup import escape as _esc

from core.errors import BadInput
from tui.cli.common import JsonOpt, StateOpt, err, fail, fail_on, open_ars, out

sync_app = typer.Typer(no_args_is_help=True, help="Deferred consumers (Neo4j, embeddings): status, drain the ledger, rebuild.")
@sync_app.command("status")
def sync_status(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Pending and failed counts, episodes per store, drift, last error."""
    with open_ars(state) as ars:
        st = ars.sync_status()
    if as_json:
        sys.stdout.write(json.dumps(st) + "\n")
        return
    c = st["counts"]
    out.print(f"pending: {st['pending']}  failed: {st['failed']}  sqlite: {c['sqlite']}  "
              f"neo4j: {c['neo4j'] if c['neo4j'] is not None else '-'}  drift: {st['drift'] if st['drift'] is not None else '-'}")
    out.print(f"namespace: {st.get('namespace')}  host: {st.get('host')}  push backlog: {st.get('push_backlog')}  "
              f"drift: {st['drift'] if st['drift'] is not None else '-'}", highlight=False)
    _print_claim(st.get("claim"))
    for name, row in (st.get("hosts") or {}).items():
        if row.get("self"):
            out.print(f"  {name} (this host): {row['local']} here, {row['graph'] if row['graph'] is not None else '-'} in the graph",
                      highlight=False)
        elif "lag" in row:
            lag = row["lag"] if row["lag"] is not None else "-"
            out.print(f"  {name}: {row['local']} pulled, {row['graph'] if row['graph'] is not None else '-'} in the graph, "
                      f"lag {lag}, last pull {row.get('last_pull') or 'never'}", highlight=False)
        else:
            out.print(f"  {name}: {row.get('graph')} in the graph ({row.get('note', '')})", highlight=False)
        if row.get("shared"):
            out.print(f"    {row['shared']} of {name}'s episodes have ids another host wrote first: both kept, "
                      f"these named ID@{name}", highlight=False)
        _print_refused(name, row.get("refused"))
    led = st["ledger"]
    out.print(f"ledger: {led['events']} events, {led['corrupt']} corrupt, torn tail: {led['torn_tail']}")
    if st["last_error"]:
        out.print(f"[yellow]last error:[/] {st['last_error']}", highlight=False)
    emb = st.get("embeddings") or {}
    if emb.get("embedder") == "off":
        out.print("embeddings: off (ARS_EMBEDDER=off)")
    elif emb:
        line = (f"embeddings ({emb.get('model') or emb.get('embedder')}): {emb.get('vectors', '-')} vectors, "
                f"{emb.get('not_embedded', '-')} episodes not embedded yet")
        if "neo4j_pending" in emb:
            line += f", {emb['neo4j_pending']} vectors not yet in Neo4j"
        out.print(line, highlight=False)
        if emb.get("last_error"):
            out.print(f"[yellow]embeddings last error:[/] {emb['last_error']}", highlight=False)


def _print_refused(name: str, refused: dict | None) -> None:
    """What the pulls refused of another host: not signed by the keys pinned for it (core/team/refusals.py)."""
    if not refused:
        return
    e, t = refused.get("episodes") or 0, refused.get("tombstones") or 0
    what = ", ".join(x for x in (f"{e} episode{'s' * (e != 1)} refused" if e else "",
                                 f"{t} tombstone{'s' * (t != 1)} not obeyed" if t else "") if x)
    line = "; ".join(x for x in (what and f"{what} ({refused.get('why', '')})", refused.get("note", "")) if x)
    err.print(f"    [yellow]{_esc(line)}[/]", highlight=False, soft_wrap=True)


def _print_claim(claim: dict | None) -> None:
    """This host id's claim in the graph (core/team/claim.py), and any conflict."""
    if not claim:
        return
    if claim.get("conflict"):
        err.print(f"[red]claim conflict:[/] {_esc(claim['conflict'])}", highlight=False, soft_wrap=True)
        return
    if claim.get("state") == "unclaimed":
        out.print(f"claim: host {claim['host']} not claimed yet ({claim.get('note', '')})", highlight=False)
        return
    out.print(f"claim: host {claim['host']} held by this state directory (instance {claim['holder']}, "
              f"since {claim.get('since') or '?'}, {claim.get('by') or ''})", highlight=False)
    if claim.get("key"):
        out.print(f"  host key: {claim['key']}", highlight=False)


def _print_sync(report, what: str) -> None:
    emb = getattr(report, "embeddings", None)
    if emb is not None:
        line = (f"embeddings ({emb.model or '-'}): {emb.embedded} embedded in {emb.seconds:.1f}s, "
                f"{emb.pending} not embedded yet")
        if emb.neo4j_pushed or emb.neo4j_pending or emb.neo4j_error:
            line += f"; {emb.neo4j_pushed} copied to Neo4j, {emb.neo4j_pending} pending"
        out.print(line, highlight=False)
        if emb.ann:
            out.print(emb.ann, highlight=False)
        if emb.neo4j_error:
            err.print(f"[yellow]neo4j vector copy deferred:[/] {emb.neo4j_error}", highlight=False)
    if getattr(report, "neo4j", "synced") != "synced":
        out.print(f"neo4j: {report.neo4j}")
        if report.ok:
            return
    for line in getattr(report, "pull_refused", None) or []:  # one per host (core/team/refusals.py)
        err.print(f"[yellow]{_esc(line)}[/]", highlight=False, soft_wrap=True)
    if report.ok:
        pulled = getattr(report, "pulled", 0)
        resumed = getattr(report, "resumed", 0)
        out.print(f"{what}: {report.applied} applied in {report.seconds:.1f}s, {report.pending} pending"
                  + (f", {pulled} pulled from other hosts" if pulled else "")
                  + (f" (went on after episode row {resumed:,}, where a stopped backfill was)" if resumed else ""))
    else:
        again = " (run it again: it goes on where it stopped)" if what == "backfill" else ""
        err.print(f"[red]{what} failed:[/] {report.error}; {report.pending} pending (nothing is lost: "
                  f"the ledger keeps them){again}", highlight=False)
        raise typer.Exit(1)


@sync_app.command("run")
def sync_run(
    rename: Annotated[Optional[str], typer.Option(
        "--rename", metavar="NEW",
        help="first give this state directory the host id NEW and claim it (when another directory holds its "
             "id); its whole ledger is pushed again under NEW")] = None,
    state: StateOpt = None, as_json: JsonOpt = False,
) -> None:
    """Drain the ledger into every consumer: Neo4j (retried with backoff) and the embeddings."""
    with open_ars(state) as ars:
        try:
            if rename is not None:
                done = ars.rename_host(rename)
                if not as_json:
                    _print_rename(done)
            report = ars.sync_run()
        except BadInput as exc:
            fail_on(exc)
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        raise typer.Exit(0 if report.ok else 2 if report.refused else 1)
    if report.refused:  # another state directory holds this host id: nothing was written
        fail(report.error)
    _print_sync(report, "sync")


def _print_rename(done: dict) -> None:
    out.print(f"this state directory is host {done['host']} in namespace {done['namespace']} now "
              f"(was {done['old']}; instance {done['instance']})"
              + ("" if done["claimed"] else "; the next sync with Neo4j claims it"), highlight=False)
    if done["released"]:
        out.print(f"  {done['old']}'s part of the graph and its claim were deleted: its episodes go out as "
                  f"{done['host']}", highlight=False)
    if done.get("note"):
        err.print(f"[yellow]{_esc(done['note'])}[/]", highlight=False)


@sync_app.command("pull")
def sync_pull(
    reset: Annotated[bool, typer.Option("--reset", help="pull every other host's episodes again, from the start")] = False,
    state: StateOpt = None, as_json: JsonOpt = False,
) -> None:
    """Pull the namespace's episodes written by other hosts into this host's SQLite."""
    with open_ars(state) as ars:
        try:
            report = ars.pull(reset=reset)
        except BadInput as exc:
            fail_on(exc)
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        raise typer.Exit(0 if report.ok else 1)
    if not report.ok:
        err.print(f"[red]pull failed:[/] {report.error} (recall still answers from what was pulled before)",
                  highlight=False)
        raise typer.Exit(1)
    per = ", ".join(f"{h}: {n}" for h, n in report.hosts.items()) or "nothing new"
    dropped = f"; dropped {report.dropped} forgotten by their host" if report.dropped else ""
    out.print(f"pulled {report.pulled} episodes ({per}){dropped}", highlight=False)
    for line in report.refused:
        err.print(f"[yellow]{_esc(line)}[/]", highlight=False)


@sync_app.command("backfill")
def sync_backfill(
    clear: Annotated[bool, typer.Option("--clear", help="delete this host's episodes in Neo4j first (never another host's)")] = False,
    state: StateOpt = None, as_json: JsonOpt = False,
) -> None:
    """Rebuild Neo4j from SQLite, the store of record."""
    from tui.cli.progress_bar import progress_bar

    with open_ars(state) as ars:
        try:
            with progress_bar("backfill", "episodes", show=not as_json) as step:
                report = ars.backfill(clear=clear, progress=step)
        except BadInput as exc:
            fail_on(exc)
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        raise typer.Exit(0 if report.ok else 2 if report.refused else 1)
    if report.refused:  # another state directory holds this host id: nothing was deleted or written
        fail(report.error)
    _print_sync(report, "backfill")

