"""``ars tui`` and ``ars demo``: the dashboard (Textual is imported inside the commands,
so ``ars recall`` and the rest never load it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape as _esc
from rich.table import Table

from core.api import ARS
from core.errors import BadInput
from tui.cli.common import LOOP_STYLE, JsonOpt, StateOpt, err, fail, fail_on, open_ars, out

ViewOpt = Annotated[str, typer.Option("--view", help="the view to open: loops, inbox, recall, checkpoints, health or context")]


def _open_dashboard(ars: ARS, *, record_only: bool = False, view: str = "loops") -> None:
    from tui.launch import Refused, run

    try:
        run(ars, view=view, record_only=record_only)
    except Refused as exc:
        fail(str(exc))


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


def demo(
    state: StateOpt = None,
    no_tui: Annotated[bool, typer.Option("--no-tui", help="only seed the state directory")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="wipe an earlier demo in that directory and seed again")] = False,
    view: ViewOpt = "loops",
    as_json: JsonOpt = False,
) -> None:
    """Seed a state directory (sample sessions through the real pipeline, loops in every status
    from samples/goals) and open the dashboard on it. Uses Neo4j when ARS_NEO4J_URI is set."""
    from core.api import load_settings
    from tui.demo import seed as seed_demo
    from tui.cli import error_map

    try:
        settings = load_settings(state_dir=state)
    except Exception as exc:  # noqa: BLE001 - a malformed ARS_* variable: one line (else it rises)
        fail_on(exc, error_map.opening(exc))
    quiet = as_json
    try:
        report = seed_demo(settings=settings, fresh=fresh,
                      progress=None if quiet else (lambda msg: err.print(f"[dim]{_esc(msg)}[/]", highlight=False)))
    except BadInput as exc:
        fail_on(exc)
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

