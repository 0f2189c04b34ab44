"""The ``ars`` command (typer + rich). Calls ``core.api`` only.

Exit codes: 0 ok, 1 failed, 2 bad input (one line on stderr saying what was
wrong and what to do). The dashboard is imported only by the commands that
open it, so ``ars recall`` never loads textual.
"""

from __future__ import annotations

import json
import os
import sys

# Every call is a fresh process (agents' hooks too): pydantic's plugin lookup
# scans every installed distribution's entry points (~50 ms), and ARS uses none.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape as _esc
from rich.table import Table

from core.api import ARS, BadInput
from pydantic import ValidationError

from core.config import config_error, load_settings
from core.errors import failure_line
from core.ingest import FORMATS
from core.models import Explanation, RecallResult

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="ARS: episodic memory, a bounded loop and a dashboard for personal AI agents.")
out = Console()
err = Console(stderr=True)

StateOpt = Annotated[Optional[Path], typer.Option("--state", help="state directory (else $ARS_STATE_DIR, else ./state)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]

STATUS_STYLE = {"ok": "green", "empty": "yellow", "skipped": "dim", "down": "red bold",
                "timeout": "red", "error": "red"}


def fail(message: str, code: int = 2) -> None:
    # the message is text, not markup: "pip install 'ars[e5]'" or a path with brackets prints whole
    err.print(f"[red]error:[/] {_esc(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def open_ars(state: Path | None, *, create: bool = False) -> ARS:
    try:
        return ARS(load_settings(state_dir=state), create=create)
    except BadInput as exc:
        fail(str(exc))
    except ValidationError as exc:  # pydantic-settings: a malformed ARS_* variable
        fail(f"bad configuration: {config_error(exc)}")
    raise AssertionError("unreachable")


def tier_line(result: RecallResult) -> str:
    parts = []
    for t in result.tiers:
        style = STATUS_STYLE.get(t.status, "")
        lat = f" {t.latency_ms:.0f}ms" if t.status not in ("skipped",) else ""
        parts.append(f"{t.tier} [{style}]{t.status}[/]{lat}")
    line = " · ".join(parts)
    if result.degraded:
        line += "  [red bold]DEGRADED[/]"
    return line


ABBREV = {"token_match": "tok", "phrase": "phr", "entity": "ent", "recency": "rec", "source": "src",
          "tier_weight": "tw"}


def components(breakdown: dict[str, float]) -> str:
    return " ".join(f"{ABBREV.get(k, k)} {v:.2f}" for k, v in breakdown.items() if v)


def print_recall(result: RecallResult, me: str | None = None) -> None:
    """The hits as a table; a memory another host of the team wrote says which (``me``: this host)."""
    table = Table(title=f"recall: {result.query!r}  tokens: {' '.join(result.tokens)}", title_justify="left",
                  show_lines=False, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("episode", overflow="fold", max_width=28)
    table.add_column("score", justify="right", no_wrap=True)
    tiers = [t.tier for t in result.tiers if t.status not in ("skipped",)]
    for t in tiers:
        table.add_column(t, overflow="fold", ratio=1, min_width=14)
    table.add_column("snippet", overflow="fold", ratio=2, min_width=30)
    for h in result.hits:
        host = (h.origin or {}).get("host")
        where = f"from {host}/{h.origin.get('agent', '')}".rstrip("/") if host and host != me else ""
        from core.memory.confidence import cue

        fit = cue(h, result.tokens)  # absolute, beside the score normalised within this result
        cells = [str(h.rank), h.episode_id + (f"\n[dim]{_esc(where)}[/]" if where else ""),
                 f"{h.score:.4f}\n[{'green' if fit.level == 'strong' else 'yellow' if fit.level == 'partial' else 'red'}]"
                 f"{fit.matched}/{fit.of} {fit.level}[/]" + (f"\n[dim]cos {fit.cosine:.2f}[/]" if fit.cosine is not None else "")]
        for t in tiers:
            th = h.per_tier.get(t)
            cells.append(f"#{th.rank} {th.score:.2f}\n[dim]{components(th.breakdown)}[/]" if th else "[dim]-[/]")
        cells.append(h.snippet)
        table.add_row(*cells)
    out.print(table)
    if not result.hits:
        out.print("[yellow]no memories matched[/]")
    from core.memory.confidence import weak_result

    if weak_result(result):
        out.print(f"[yellow]{_esc(weak_result(result))}[/]", highlight=False)
    out.print(tier_line(result))
    for t in result.tiers:
        if t.error and t.status in ("down", "timeout", "error"):
            out.print(f"  [dim]{t.tier}: {t.error}[/]", highlight=False)


def print_explain(ex: Explanation) -> None:
    table = Table(title=f"explain {ex.episode_id!r} for {ex.query!r}", title_justify="left", expand=True)
    for col in ("tier", "status", "stored", "rank", "raw score", "matched", "verdict"):
        table.add_column(col, overflow="fold")
    for t in ex.tiers:
        stored = {True: "yes", False: "no", None: "?"}[t.stored]
        table.add_row(t.tier, t.status, stored, str(t.rank or "-"),
                      f"{t.raw_score:.3f}" if t.raw_score is not None else "-",
                      " ".join(t.matched_tokens) or "-", t.verdict)
    out.print(table)
    if ex.tiers and ex.tiers[0].missing_tokens:
        out.print(f"missing query tokens: {' '.join(ex.tiers[0].missing_tokens)}", highlight=False)
    out.print(f"[bold]verdict:[/] {ex.verdict}", highlight=False)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="what to remember (English, Chinese or both)")],
    k: Annotated[int, typer.Option("-k", help="how many memories to return")] = 10,
    tiers: Annotated[Optional[str], typer.Option("--tiers", help="comma-separated: neo4j,sqlite,files (default: the index tiers, files as fallback)")] = None,
    explain: Annotated[Optional[str], typer.Option("--explain", help="explain why this episode id was or was not returned")] = None,
    scope: Annotated[Optional[str], typer.Option("--scope", help="only these agents or hosts of the namespace: agent=NAME,host=NAME")] = None,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recall memories from every tier, with per-tier scores."""
    if explain is None:
        from tui.daemon import client

        reply = client.recall(query, k, tiers, None if state is None else str(state), scope)
        if reply is not None and reply["code"] == 0:  # a warm daemon answered (errors: said below, as always)
            from core.models import RecallResult

            if as_json:
                sys.stdout.write(reply["stdout"])
            else:
                print_recall(RecallResult.model_validate_json(reply["stdout"]), reply.get("host"))
            return
    with open_ars(state) as ars:
        try:
            if explain is not None:
                ex = ars.explain(query, explain, k=k, tiers=tiers)
                out.print_json(ex.model_dump_json()) if as_json else print_explain(ex)
                return
            result = ars.recall(query, k=k, tiers=tiers, scope=scope)
        except BadInput as exc:
            fail(str(exc))
    _print_result(result, as_json, ars.identity.host)
    if explain is None:
        sys.stdout.flush()
        client.spawn(None if state is None else str(state))  # the next call finds it warm


def _print_result(result, as_json: bool, me: str | None) -> None:
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        print_recall(result, me)


def print_ingest(report) -> None:
    table = Table("file", "format", "added", "skipped", "malformed", "status", title="ingest", title_justify="left")
    # file names and errors are escaped: a name or a quoted line holding
    # "[/]" is text, not console markup (it raised MarkupError)
    for f in report.per_file[-40:]:
        style = {"failed": "red", "unchanged": "dim", "skipped": "yellow"}.get(f.status, "")
        table.add_row(_esc(f.file), f.format or "-", str(f.episodes_added), str(f.duplicates_skipped),
                      str(f.malformed), f"[{style}]{f.status}[/]" if style else f.status)
    if len(report.per_file) > 1:
        out.print(table)
    skipped = getattr(report, "skipped_files", 0)
    out.print(f"files: {report.files}  episodes added: {report.episodes_added}  "
              f"duplicates skipped: {report.duplicates_skipped}  unchanged files: {report.unchanged_files}  "
              + (f"skipped inputs: {skipped}  " if skipped else "")
              + f"malformed lines: {len(report.malformed)}")
    for m in report.malformed[:50]:
        where = f"{m.file}:{m.line}" if m.line else m.file
        out.print(f"  [yellow]{_esc(where)}[/]: {_esc(m.error)}", highlight=False)
    if len(report.malformed) > 50:
        out.print(f"  ... and {len(report.malformed) - 50} more (use --json for all)")
    left_out = getattr(report, "unsupported", [])
    if left_out:  # files found in folders and not read: counted here, each with its reason in --json
        out.print(f"left out: {len(left_out)} file{'s' if len(left_out) != 1 else ''} in formats ars does not read "
                  f"(e.g. {_esc(Path(left_out[0].file).name)}: {_esc(left_out[0].reason)}); --json lists them",
                  highlight=False)
    if report.sync is not None:
        s = report.sync
        if s["ok"]:
            out.print(f"neo4j: synced {s['applied']} events, {s['pending']} pending")
        elif s.get("refused"):  # another state directory holds this host id (ars sync run --rename)
            out.print(f"[yellow]neo4j: not synced: {_esc(s['error'])}; {s['pending']} pending in the ledger[/]",
                      highlight=False)
        else:
            out.print(f"[yellow]neo4j: sync deferred ({s['error']}); {s['pending']} pending; "
                      f"run `ars sync run` when it is back[/]", highlight=False)


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(help="files or folders to ingest (checked by ars, so one bad path never stops the rest)")],
    fmt: Annotated[str, typer.Option("--format", help=f"one of: {', '.join(FORMATS)}")] = "auto",
    watch: Annotated[bool, typer.Option("--watch", help="keep following the folders and ingest what changes")] = False,
    idle: Annotated[float, typer.Option("--idle", help="with --watch: seconds of quiet before a session is finalised")] = 300.0,
    force: Annotated[bool, typer.Option("--force", help="re-read files even when unchanged")] = False,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ingest session files into memory (incremental: unchanged files are skipped)."""
    with open_ars(state, create=True) as ars:
        try:
            if watch:
                return _watch(ars, paths, fmt, idle, as_json)
            report = _ingest_with_progress(ars, paths, fmt, force, quiet=as_json)
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json(exclude={"per_file"}) + "\n")
    else:
        print_ingest(report)
    if report.failed_files and report.failed_files == len(report.per_file):
        fail("nothing could be read: check the paths and their permissions")
    if report.unreadable:  # a folder of files none of which ars reads: said, not silently ingested as nothing
        fail("; ".join(report.unreadable), code=1)
    if report.failed_files:
        raise typer.Exit(1)


def _ingest_with_progress(ars: ARS, paths: list[Path], fmt: str, force: bool, quiet: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    def waiting(message: str) -> None:
        err.print(f"[yellow]{_esc(message)}[/]", highlight=False, soft_wrap=True)

    if quiet or not err.is_terminal:
        return ars.ingest(paths, fmt=fmt, force=force, on_wait=waiting)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("ingesting", total=None)

        def step(path: Path, summary) -> None:
            bar.update(task, advance=1, description=f"{path.name[:40]} +{summary.episodes_added}")

        return ars.ingest(paths, fmt=fmt, force=force, progress=step, on_wait=waiting)


def _watch(ars: ARS, paths: list[Path], fmt: str, idle: float, as_json: bool) -> None:
    def on_report(report) -> None:
        if as_json:
            sys.stdout.write(report.model_dump_json(exclude={"per_file"}) + "\n")
            sys.stdout.flush()
        elif report.episodes_added or report.malformed or report.failed_files:
            print_ingest(report)

    def on_finalized(path: Path) -> None:
        if not as_json:
            out.print(f"[green]finalised[/] {path} (idle {idle:.0f}s)")

    watcher = ars.watcher(paths, fmt=fmt, idle_seconds=idle, on_report=on_report, on_finalized=on_finalized)
    if not as_json:
        out.print(f"watching {', '.join(map(str, paths))} (Ctrl-C to stop)")
    try:
        watcher.run()
    except KeyboardInterrupt:
        watcher.stop_event.set()


sync_app = typer.Typer(no_args_is_help=True, help="Deferred consumers (Neo4j, embeddings): status, drain the ledger, rebuild.")
app.add_typer(sync_app, name="sync")


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


def _print_sync(report, what: str) -> None:
    emb = getattr(report, "embeddings", None)
    if emb is not None:
        line = (f"embeddings ({emb.model or '-'}): {emb.embedded} embedded in {emb.seconds:.1f}s, "
                f"{emb.pending} not embedded yet")
        if emb.neo4j_pushed or emb.neo4j_pending or emb.neo4j_error:
            line += f"; {emb.neo4j_pushed} copied to Neo4j, {emb.neo4j_pending} pending"
        out.print(line, highlight=False)
        if emb.neo4j_error:
            err.print(f"[yellow]neo4j vector copy deferred:[/] {emb.neo4j_error}", highlight=False)
    if getattr(report, "neo4j", "synced") != "synced":
        out.print(f"neo4j: {report.neo4j}")
        if report.ok:
            return
    if report.ok:
        pulled = getattr(report, "pulled", 0)
        out.print(f"{what}: {report.applied} applied in {report.seconds:.1f}s, {report.pending} pending"
                  + (f", {pulled} pulled from other hosts" if pulled else ""))
    else:
        err.print(f"[red]{what} failed:[/] {report.error}; {report.pending} pending (nothing is lost: "
                  "the ledger keeps them)", highlight=False)
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
            fail(str(exc))
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
            fail(str(exc))
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
    with open_ars(state) as ars:
        try:
            report = ars.backfill(clear=clear)
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        raise typer.Exit(0 if report.ok else 2 if report.refused else 1)
    if report.refused:  # another state directory holds this host id: nothing was deleted or written
        fail(report.error)
    _print_sync(report, "backfill")


@app.command()
def enrich(
    pending: Annotated[bool, typer.Option("--pending", help="upgrade episodes marked deterministic:pending")] = False,
    limit: Annotated[Optional[int], typer.Option("--limit", help="at most this many")] = None,
    state: StateOpt = None, as_json: JsonOpt = False,
) -> None:
    """Re-enrich episodes with the configured model (ARS_OPENAI_BASE_URL)."""
    if not pending:
        fail("say what to enrich: --pending upgrades the episodes a failed model call left deterministic")
    with open_ars(state) as ars:
        try:
            upgraded, still = ars.enrich_pending(limit=limit)
        except BadInput as exc:
            fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps({"upgraded": upgraded, "still_pending": still}) + "\n")
    else:
        out.print(f"enriched {upgraded} episodes with the model; {still} still pending")
    if still and not upgraded:
        raise typer.Exit(1)


@app.command()
def rebuild(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Recreate memory.sqlite from the ledger."""
    with open_ars(state) as ars:
        try:
            n = ars.rebuild()
        except BadInput as exc:
            fail(str(exc))
        count = ars.memory.sqlite.count()
        skipped = ars.ledger_problems()
    if as_json:
        sys.stdout.write(json.dumps({"applied": n, "episodes": count, "skipped": skipped}, ensure_ascii=False) + "\n")
    else:
        for line in skipped:
            err.print(f"[yellow]skipped[/] {_esc(line)}", highlight=False, soft_wrap=True)
        out.print(f"rebuilt memory.sqlite from the ledger: {n} events applied, {count} episodes"
                  + (f", {len(skipped)} bad lines skipped (listed above; fix or delete them and rebuild)"
                     if skipped else ""))
    if skipped:
        raise typer.Exit(1)


@app.command()
def doctor(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Each tier's health, sync health and the configuration in force (no secrets)."""
    with open_ars(state) as ars:
        report = ars.doctor()
    if as_json:
        sys.stdout.write(json.dumps(report) + "\n")
        return
    out.print(f"state: {report['state_dir']}")
    team = report.get("team") or {}
    out.print(f"namespace: {team.get('namespace')}  host: {team.get('host')}"
              + (f"  agent: {team['agent']}" if team.get("agent") else ""), highlight=False)
    table = Table("tier", "status", "latency", "detail")
    for t in report["tiers"]:
        style = STATUS_STYLE.get(t["status"], "")
        table.add_row(t["tier"], f"[{style}]{t['status']}[/]", f"{t['latency_ms']:.0f} ms", t["error"])
    out.print(table)
    sync = report["sync"]
    c = sync["counts"]
    out.print(f"sync to neo4j: pending {sync['pending']}, failed {sync['failed']}, sqlite {c['sqlite']}, "
              f"neo4j {c['neo4j'] if c['neo4j'] is not None else '-'}, "
              f"drift {sync['drift'] if sync['drift'] is not None else '-'}"
              + (f", last error: {sync['last_error']}" if sync["last_error"] else ""), highlight=False)
    cfg = Table("setting", "value")
    for key, value in report["config"].items():
        cfg.add_row(key, str(value))
    out.print(cfg)


# =============================================================================
# The autonomous loop: `ars loop ...`, `ars check`, `ars rehydrate` (core/loop)
# =============================================================================
loop_app = typer.Typer(no_args_is_help=True,
                       help="Run and supervise the autonomous loop (observe, orient, decide, act, verify, record).")
app.add_typer(loop_app, name="loop")
from tui.cli.mcp import mcp_command  # noqa: E402
app.command("mcp")(mcp_command)
from tui.cli.inbox import inbox_app  # noqa: E402
app.add_typer(inbox_app, name="inbox")
from tui.cli.supervisor import PassFdOpt, gate_app, signer_for, supervisor_app  # noqa: E402
app.add_typer(supervisor_app, name="supervisor")
app.add_typer(gate_app, name="gate")
from tui.cli.daemon import daemon_app  # noqa: E402
app.add_typer(daemon_app, name="daemon")
from tui.cli import govern as _govern  # noqa: E402  (ars forget, ars export)
app.command("forget")(_govern.forget_command), app.command("export")(_govern.export_command), app.command("redact")(_govern.redact_command)
from tui.cli.agents import register as _register_agents  # noqa: E402
_register_agents(app)  # ars hook, ars install
from tui.cli.serve import serve_command  # noqa: E402  (ars serve: aiohttp loads only when it runs)
app.command("serve")(serve_command)

LOOP_STYLE = {"initialized": "dim", "active": "cyan", "waiting_human": "yellow bold", "blocked": "red bold",
              "done": "green bold", "aborted": "red"}
OUTCOME_STYLE = {"pass": "green", "fail": "red", "unknown": "yellow"}
LoopIdArg = Annotated[str, typer.Argument(help="the loop id (ars loop list shows them)")]
RequestOpt = Annotated[Optional[str], typer.Option("--request", help="the request id to decide (default: the open one)")]
NoResumeOpt = Annotated[bool, typer.Option("--no-resume", help="record the decision only; resume later")]


def _loop_call(fn, *, second_decision_fails: bool = False):
    """Run a loop or inbox API call; people's errors exit 2, failures (busy,
    corrupt, a state file that cannot be read or written) exit 1, each as one
    line. ``second_decision_fails``: an inbox decision already taken by
    someone else exits 1 (``ars inbox``; the loop commands keep exit 2)."""
    from core.inbox import AlreadyDecided, CorruptRequest
    from core.loop.checkpoints import CorruptCheckpoint, LoopBusy
    from core.loop.decisions import CorruptDecision

    try:
        return fn()
    except AlreadyDecided as exc:
        fail(str(exc), code=1 if second_decision_fails else 2)
    except BadInput as exc:
        fail(str(exc))
    except (LoopBusy, CorruptCheckpoint, CorruptRequest) as exc:
        fail(str(exc), code=1)
    except CorruptDecision as exc:
        fail(f"{exc}: `ars loop show` says what to do", code=1)
    except OSError as exc:
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        fail(f"cannot use{where}: {exc.strerror or ' '.join(str(exc).split())[:200]}; check that it is "
             "a file you can read and write (move a stray directory or file of that name aside)", code=1)
    raise AssertionError("unreachable")


def _loop_exit(state) -> None:
    """0 when the loop is done or waits for a person; 1 when it ended blocked or aborted."""
    if state.status in ("blocked", "aborted"):
        raise typer.Exit(1)


def _warn(lines) -> None:
    for line in lines:
        err.print(f"[yellow]warning:[/] {_esc(line)}", highlight=False, soft_wrap=True)


def print_loop(s) -> None:
    style = LOOP_STYLE.get(s.status, "")
    out.print(f"[bold]{_esc(s.loop_id)}[/]  goal [bold]{_esc(s.goal_id)}[/]  policy {s.policy}"
              + (f"  forked from {_esc(s.parent.loop_id)}@{s.parent.index}" if s.parent else ""), highlight=False)
    out.print(f"status [{style}]{s.status}[/]  iteration {s.iteration}/{s.budget.max_iterations}  "
              f"step {s.current_step}  failures {s.consecutive_failures}/{s.budget.max_consecutive_failures}  "
              f"tokens {s.tokens_used}  elapsed {s.elapsed_s:.1f} s", highlight=False)
    out.print(f"goal: {_esc(s.goal.goal)}", highlight=False)
    if s.exit_reason:
        out.print(f"exit: {_esc(s.exit_reason)}", highlight=False)
    p = s.pending_approval
    if p is not None:
        out.print(f"[yellow bold]waiting for a person[/] — request {p.request_id} ({p.kind}): {_esc(p.prompt)}",
                  highlight=False)
        if p.action is not None and p.kind == "approval":
            out.print(f"  proposed: {_esc(p.action.tool)} {_esc(json.dumps(p.action.args, ensure_ascii=False))}"
                      f"  [dim]({_esc(p.risk)})[/]", highlight=False)
            cmd = p.action.args.get("cmd") if p.action.tool == "shell" else None
            if isinstance(cmd, str):  # the command exactly as it will run (no JSON escaping)
                out.print(f"  runs: {_esc(cmd)}", highlight=False, soft_wrap=True)
        hints = {"approve": f"ars loop approve {s.loop_id} [--note TEXT]",
                 "edit": f"ars loop edit {s.loop_id} --args JSON",
                 "reject": f"ars loop reject {s.loop_id} --reason TEXT",
                 "respond": f'ars loop respond {s.loop_id} "TEXT"'}
        for kind in p.allowed:
            out.print(f"  [dim]{_esc(hints[kind])}[/]", highlight=False)
    for b in s.blockers:
        out.print(f"[red]blocker:[/] {_esc(b)}", highlight=False)
    if s.iterations:
        table = Table("#", "action", "outcome", "reason", "checks failed", "person", title_justify="left",
                      expand=True)
        for r in s.iterations:
            a = r.action
            what = f"{a.tool}: {a.description}" if a and a.description and a.description != a.tool else (
                a.tool if a else "-")
            v = r.verification
            oc = f"[{OUTCOME_STYLE.get(v.outcome, '')}]{v.outcome}[/]" if v else "-"
            table.add_row(str(r.iteration), _esc(what), oc, _esc(v.reason if v else ""), str(r.checks_failed),
                          _esc(r.decision))
        out.print(table)


def _show(state, as_json: bool, ars: ARS) -> None:
    _warn(ars.loops.warnings)
    if as_json:
        sys.stdout.write(state.model_dump_json() + "\n")
    else:
        print_loop(state)


@loop_app.command("run")
def loop_run(
    goal: Annotated[Optional[str], typer.Option("--goal", help="the goal as text")] = None,
    goal_file: Annotated[Optional[Path], typer.Option("--goal-file", help="a GoalFrame JSON file (may hold a script)")] = None,
    policy: Annotated[str, typer.Option("--policy", help="offline (follows the goal file's script) or llm")] = "offline",
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Start a loop and run it until it exits or waits for a person; prints the final LoopState."""
    if (goal is None) == (goal_file is None):
        fail("give exactly one of --goal TEXT or --goal-file FILE")
    if policy not in ("offline", "llm"):
        fail(f"unknown policy {policy!r}: choose offline or llm")
    with open_ars(state, create=True) as ars:
        s = _loop_call(lambda: ars.loop_start(goal if goal is not None else goal_file, policy=policy))
        _show(s, as_json, ars)
    _loop_exit(s)


@loop_app.command("list")
def loop_list(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Every loop, newest first; unreadable checkpoints are reported by name."""
    from core.loop.decisions import pending_problem

    with open_ars(state) as ars:
        states, problems = _loop_call(ars.loop_list)
        # a decision file that cannot be read keeps its loop waiting: say so here too
        problems += [pr for s in states if s.pending_approval is not None
                     for pr in [_loop_call(lambda s=s: pending_problem(ars.state_dir, s))] if pr]
    _warn(problems)
    if as_json:
        sys.stdout.write("[" + ",".join(s.model_dump_json() for s in states) + "]\n")
        return
    if not states:
        out.print("no loops yet: ars loop run --goal-file samples/goals/release-notes.json")
        return
    # the loop id is what a person copies into the next command: never cut or wrapped (the goal,
    # then the other columns give way, folding onto a second line)
    from rich import box

    table = Table(expand=True, box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True)
    table.add_column("loop", no_wrap=True, min_width=max(len(s.loop_id) for s in states))
    table.add_column("goal", overflow="fold", ratio=2, min_width=10)
    table.add_column("status", no_wrap=True)
    table.add_column("it step", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    table.add_column("asks", overflow="fold", ratio=1, min_width=8)
    for s in states:
        style = LOOP_STYLE.get(s.status, "")
        p = s.pending_approval
        table.add_row(s.loop_id, _esc(s.goal_id), f"[{style}]{s.status}[/]", f"{s.iteration} {s.current_step}",
                      s.updated_at.strftime("%m-%d %H:%M"), p.kind if p else "")
    out.print(table)


@loop_app.command("show")
def loop_show(loop_id: LoopIdArg, state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """One loop's latest state."""
    from core.loop.decisions import pending_problem

    with open_ars(state) as ars:
        s = _loop_call(lambda: ars.loop_show(loop_id))
        problem = _loop_call(lambda: pending_problem(ars.state_dir, s))
        if problem:
            ars.loops.warnings.append(problem)
        _show(s, as_json, ars)


def _decide(loop_id: str, state: Path | None, as_json: bool, call, *, sign: str = "",
            passphrase_fd: int | None = None) -> None:
    """Run a loop call; ``sign`` (what is decided, for the passphrase prompt): the
    decision is signed with the supervisor's key when one is set up."""
    with open_ars(state) as ars:
        if sign:
            signer = signer_for(ars, passphrase_fd, f"{sign} loop {loop_id}")
            s = _loop_call(lambda: call(ars, signer))
        else:
            s = _loop_call(lambda: call(ars))
        _show(s, as_json, ars)
    _loop_exit(s)


@loop_app.command("approve")
def loop_approve(loop_id: LoopIdArg, note: Annotated[str, typer.Option("--note", help="why (kept in the ledger)")] = "",
                 request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
                 as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Approve the proposed action and resume the loop."""
    _decide(loop_id, state, as_json, lambda a, k: a.loop_approve(loop_id, note, request, not no_resume, signer=k),
            sign="approve", passphrase_fd=passphrase_fd)


@loop_app.command("reject")
def loop_reject(loop_id: LoopIdArg,
                reason: Annotated[str, typer.Option("--reason", help="why not (required; kept in the ledger)")] = "",
                request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
                as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Reject the proposed action (or decline a question); the loop follows its policy."""
    _decide(loop_id, state, as_json, lambda a, k: a.loop_reject(loop_id, reason, request, not no_resume, signer=k),
            sign="reject", passphrase_fd=passphrase_fd)


@loop_app.command("respond")
def loop_respond(loop_id: LoopIdArg, text: Annotated[str, typer.Argument(help="the answer")],
                 request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
                 as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Answer the loop's question (or unblock it with guidance) and resume."""
    _decide(loop_id, state, as_json, lambda a, k: a.loop_respond(loop_id, text, request, not no_resume, signer=k),
            sign="answer", passphrase_fd=passphrase_fd)


@loop_app.command("edit")
def loop_edit(loop_id: LoopIdArg,
              args: Annotated[str, typer.Option("--args", help='the new arguments as a JSON object, e.g. \'{"cmd": "make test"}\'')],
              note: Annotated[str, typer.Option("--note", help="why the change")] = "",
              request: RequestOpt = None, no_resume: NoResumeOpt = False, state: StateOpt = None,
              as_json: JsonOpt = False, passphrase_fd: PassFdOpt = None) -> None:
    """Change the proposed action's arguments, approve it, and resume."""
    from core.loop.goals import parse_json

    parsed = _loop_call(lambda: parse_json(args, "--args"))
    if not isinstance(parsed, dict):
        fail("--args must be a JSON object, e.g. '{\"cmd\": \"make test\"}'")
    _decide(loop_id, state, as_json, lambda a, k: a.loop_edit(loop_id, parsed, note, request, not no_resume, signer=k),
            sign="edit and approve", passphrase_fd=passphrase_fd)


@loop_app.command("resume")
def loop_resume(loop_id: LoopIdArg, state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Continue a loop from its checkpoint (after a crash, or to apply a recorded decision)."""
    _decide(loop_id, state, as_json, lambda a: a.loop_resume(loop_id))


@loop_app.command("cancel")
def loop_cancel(loop_id: LoopIdArg,
                reason: Annotated[str, typer.Option("--reason", help="why")] = "cancelled by a person",
                state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Abort a loop that has not ended."""
    with open_ars(state) as ars:
        s = _loop_call(lambda: ars.loop_cancel(loop_id, reason))
        _show(s, as_json, ars)


@loop_app.command("fork")
def loop_fork(loop_id: LoopIdArg,
              at: Annotated[int, typer.Option("--at", help="the history entry to start from (ars loop history ID)")],
              run: Annotated[bool, typer.Option("--run", help="run the new loop at once")] = False,
              state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Start a new loop from history entry N (its parent recorded); the original is untouched."""
    with open_ars(state) as ars:
        s = _loop_call(lambda: ars.loop_fork(loop_id, at, run=run))
        _show(s, as_json, ars)
    if run:
        _loop_exit(s)


def _warn_skipped(problems) -> None:
    """One line on stderr for the history lines that could not be read (a torn
    last line after a crash, or damage): how many, which, and the first reason."""
    if not problems:
        return
    name, _, _ = problems[0].file.rpartition(":")
    nums = [p.file.rpartition(":")[2] for p in problems]
    shown = ", ".join(nums[:10]) + (f" and {len(nums) - 10} more" if len(nums) > 10 else "")
    n = len(problems)
    _warn([f"skipped {n} unreadable line{'s' * (n != 1)} of {name} (line{'s' * (n != 1)} {shown}; "
           f"the entries shown are the readable ones): line {nums[0]}: {problems[0].error}"])


@loop_app.command("history")
def loop_history(loop_id: LoopIdArg,
                 at: Annotated[Optional[int], typer.Option("--at", help="show entry N in full (replay one step)")] = None,
                 state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Step through a loop's transitions (what replay and fork use)."""
    with open_ars(state) as ars:
        _, problems = _loop_call(lambda: ars.loops.store.history(loop_id))
        _warn_skipped(problems)
        if at is not None:
            e = _loop_call(lambda: ars.loop_entry(loop_id, at))
            if as_json:
                sys.stdout.write(e.model_dump_json() + "\n")
                return
            out.print(f"[bold]entry {e.index}[/] {e.ts:%Y-%m-%d %H:%M:%S}  {e.kind}: "
                      f"{e.from_status or '-'}/{e.from_step or '-'} -> {e.to_status}/{e.to_step}  "
                      f"iteration {e.iteration}", highlight=False)
            out.print(f"reason: {_esc(e.reason)}", highlight=False)
            rec = e.detail.get("recall")
            if rec:
                out.print(f"recall {_esc(rec['query'])!s}: " + ", ".join(
                    f"{_esc(h['episode_id'])} {h['score']:.3f}" for h in rec["hits"]) or "no hits", highlight=False)
            for key in ("premises", "hypotheses", "action", "question", "result", "verification", "decision"):
                if e.detail.get(key) is not None:
                    out.print(f"{key}: {_esc(json.dumps(e.detail[key], ensure_ascii=False, default=str))}",
                              highlight=False, soft_wrap=True)
            failed = [c for c in e.detail.get("checks", []) if not c["result"]["passed"]]
            for c in failed:
                out.print(f"[red]check failed[/] {_esc(c['result']['subject'])}: " + "; ".join(
                    f"{_esc(v['title'])}: {_esc(v['reason'])}" for v in c["result"]["verdicts"]
                    if v["verdict"] == "fail"), highlight=False)
            print_loop(e.state)
            return
        entries = _loop_call(lambda: ars.loop_history(loop_id))
    if as_json:
        sys.stdout.write("[" + ",".join(e.model_dump_json() for e in entries) + "]\n")
        return
    table = Table("#", "time", "kind", "status", "step", "it", "reason", expand=True)
    for e in entries:
        st = e.to_status if e.from_status == e.to_status else f"{e.from_status or '-'} -> {e.to_status}"
        table.add_row(str(e.index), f"{e.ts:%H:%M:%S}", e.kind, st, f"{e.from_step or '-'} -> {e.to_step}",
                      str(e.iteration), _esc(e.reason))
    out.print(table)


@app.command()
def check(
    text: Annotated[Optional[str], typer.Argument(help="the reasoning to check; '-' or nothing reads stdin")] = None,
    as_json: JsonOpt = False,
) -> None:
    """First-principles verdicts (SOUL.md) with the offending spans; exit 1 when a rule fails."""
    if text is None or text == "-":
        text = sys.stdin.read()
    try:
        result = ARS.check(text)
    except BadInput as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        table = Table("rule", "verdict", "evidence", "reason", title=f"check: {_esc(result.text[:80])}",
                      title_justify="left", expand=True)
        for v in result.verdicts:
            style = "green" if v.verdict == "pass" else "red bold"
            ev = " · ".join(f"“{e.text}”" for e in v.evidence if v.verdict == "fail")
            table.add_row(_esc(v.title), f"[{style}]{v.verdict}[/]", _esc(ev), _esc(v.reason))
        out.print(table)
        out.print("[green bold]PASS[/]" if result.passed else
                  f"[red bold]FAIL[/] ({len(result.failures())} of 4 rules)")
    if not result.passed:
        raise typer.Exit(1)


@app.command()
def rehydrate(
    fmt: Annotated[str, typer.Option("--format", help="md or json")] = "md",
    state: StateOpt = None,
) -> None:
    """Startup summary: open loops, next steps, memories, sync health; also writes startup-context.md."""
    if fmt not in ("md", "json"):
        fail(f"unknown format {fmt!r}: choose md or json")
    from core.loop.rehydrate import render_markdown

    with open_ars(state, create=True) as ars:
        report = _loop_call(ars.rehydrate)
    sys.stdout.write(report.model_dump_json() + "\n" if fmt == "json" else render_markdown(report))
    if fmt == "md":
        err.print(f"[dim]written to {_esc(report.path)}[/]", highlight=False)


# =============================================================================
# -- dashboard: `ars tui`, `ars demo` (Textual is imported inside the commands,
#    so `ars recall` and the rest never load it)
# =============================================================================
ViewOpt = Annotated[str, typer.Option("--view", help="the view to open: loops, inbox, recall, checkpoints or health")]


def _open_dashboard(ars: ARS, *, record_only: bool = False, view: str = "loops") -> None:
    from tui.launch import Refused, run

    try:
        run(ars, view=view, record_only=record_only)
    except Refused as exc:
        fail(str(exc))


@app.command("tui")
def tui_command(
    state: StateOpt = None,
    record_only: Annotated[bool, typer.Option(
        "--record-only", help="only record decisions in the state directory (another process runs the loops)")] = False,
    view: ViewOpt = "loops",
) -> None:
    """The supervision dashboard on an existing state directory: loops, inbox, recall, checkpoints, health."""
    # a plain `ars tui ...` line goes straight to tui/launch.py (tui/entry.py); this parses the rest, --help too
    from tui.launch import Refused, check_not_empty, check_view

    try:
        check_view(view)
        check_not_empty(state)
    except Refused as exc:
        fail(str(exc))
    with open_ars(state) as ars:
        _open_dashboard(ars, record_only=record_only, view=view)


@app.command()
def demo(
    state: StateOpt = None,
    no_tui: Annotated[bool, typer.Option("--no-tui", help="only seed the state directory")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="wipe an earlier demo in that directory and seed again")] = False,
    view: ViewOpt = "loops",
    as_json: JsonOpt = False,
) -> None:
    """Seed a state directory (sample sessions through the real pipeline, loops in every status
    from samples/goals) and open the dashboard on it. Uses Neo4j when ARS_NEO4J_URI is set."""
    from core.demo import seed

    try:
        settings = load_settings(state_dir=state)
    except ValidationError as exc:
        fail(f"bad configuration: {config_error(exc)}")
    quiet = as_json
    try:
        report = seed(settings=settings, fresh=fresh,
                      progress=None if quiet else (lambda msg: err.print(f"[dim]{_esc(msg)}[/]", highlight=False)))
    except BadInput as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
    elif report.reused:
        err.print(f"[dim]{_esc(report.state_dir)} already holds the demo ({len(report.loops)} loops); "
                  "--fresh seeds it again[/]", highlight=False)
    else:
        out.print(f"seeded [bold]{_esc(report.state_dir)}[/] in {report.seconds:.1f} s: {report.files} files, "
                  f"{report.episodes_added} episodes, neo4j {_esc(report.neo4j)}", highlight=False)
        table = Table("loop", "goal", "status", "parent", expand=False)
        for lp in report.loops:
            style = LOOP_STYLE.get(lp.status, "")
            table.add_row(lp.loop_id, _esc(lp.goal_id), f"[{style}]{lp.status}[/]", lp.parent)
        if no_tui:
            out.print(table)
            out.print(f"open it with: ars tui --state {_esc(report.state_dir)}", highlight=False)
    if no_tui or as_json:
        return
    with open_ars(Path(report.state_dir)) as ars:
        if not report.reused and settings.embedder != "off":
            # what `ars sync run` would do next: the dense tier then shows in the dashboard's recall and
            # health views from the start (ingest never waits for the model; the demo runs it once)
            err.print("[dim]embedding the episodes for the dense tier (ars sync run)[/]", highlight=False)
            emb = ars.sync_run(max_seconds=120).embeddings
            if emb is not None and not emb.ok:
                err.print(f"[yellow]dense tier not embedded: {_esc(emb.error)}[/]", highlight=False)
        _open_dashboard(ars, view=view)


def _lean_app(first: list[str]) -> typer.Typer | None:
    """The ``ars`` app with only the command being run.

    typer builds the click command of every registered function before it
    parses (~150 ms for ARS's two dozen, on every fresh process an agent hook
    starts); a command line that names one builds just that one. ``ars``,
    ``ars --help`` and unknown names use the whole app, so help and "no such
    command" read as before."""
    if not first:
        return None
    name = first[0]
    lean = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                       help=app.info.help)
    for info in app.registered_commands:
        if (info.name or info.callback.__name__.replace("_", "-")) == name:
            lean.registered_commands.append(info)
            break
    for group in app.registered_groups:
        if group.name == name:
            lean.registered_groups.append(group)
            break
    if not lean.registered_commands and not lean.registered_groups:
        return None
    lean.callback()(_root)  # a group, so `ars NAME ...` parses as it does with every command
    return lean


def _root() -> None:
    """ARS: episodic memory, a bounded loop and a dashboard for personal AI agents."""


def main() -> None:
    # Everything ARS writes is private (transcripts hold secrets): the core
    # sets 0600/0700 on what it creates; the umask covers what libraries create.
    os.umask(os.umask(0o077) | 0o077)
    code: int | str | None = 0
    try:
        (_lean_app(sys.argv[1:2]) or app)()  # usage errors and typer.Exit end in sys.exit inside
    except SystemExit as done:
        code = done.code
    except KeyboardInterrupt:
        err.print("interrupted: anything acknowledged before is kept", highlight=False)
        code = 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("ARS_DEBUG"):
            raise
        code, message = failure_line(exc)
        err.print(f"[red]error:[/] {_esc(message)}", highlight=False, soft_wrap=True)
    _exit_now(code)


def _exit_now(code: int | str | None) -> None:
    """Leave without the interpreter's teardown (~110 ms of freeing modules,
    ~240 ms with the Neo4j driver loaded: a tenth of a fresh `ars recall`).
    Safe because nothing is left to write: every acknowledged write was
    fsync'd when it returned, SQLite commits are in its WAL, the dashboard has
    restored the terminal, and the threads left are idle pools or a Neo4j
    search that recall no longer waits for."""
    if isinstance(code, str):
        err.print(code, highlight=False)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed pipe: nothing more can be said
    os._exit(code or 0)


if __name__ == "__main__":
    main()
