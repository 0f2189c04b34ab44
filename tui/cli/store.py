"""``ars rebuild`` and ``ars doctor``: the store recreated from the ledger, and its health."""

from __future__ import annotations

import json
import sys

import typer
from rich.markup import escape as _esc
from rich.table import Table

from core.errors import BadInput
from tui.cli.common import STATUS_STYLE, JsonOpt, StateOpt, err, fail_on, open_ars, out

def rebuild(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Recreate memory.sqlite from the ledger."""
    from tui.cli.progress_bar import progress_bar

    with open_ars(state) as ars:
        try:
            with progress_bar("rebuild", "MB of the ledger", show=not as_json, scale=2**20) as step:
                n = ars.rebuild(progress=step)
        except BadInput as exc:
            fail_on(exc)
        count = ars.memory.sqlite.count()
        skipped = ars.ledger_problems()
        resumed = ars.rebuild_resumed_at()
    if as_json:
        sys.stdout.write(json.dumps({"applied": n, "episodes": count, "skipped": skipped, "resumed_at": resumed},
                                    ensure_ascii=False) + "\n")
    else:
        for line in skipped:
            err.print(f"[yellow]skipped[/] {_esc(line)}", highlight=False, soft_wrap=True)
        out.print(f"rebuilt memory.sqlite from the ledger: {n} events applied, {count} episodes"
                  + (f" (went on from byte {resumed:,} of the ledger, where a stopped rebuild was)" if resumed else "")
                  + (f", {len(skipped)} bad lines skipped (listed above; fix or delete them and rebuild)"
                     if skipped else ""))
    if skipped:
        raise typer.Exit(1)


def doctor(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Each tier's health, sync health and the configuration in force (no secrets)."""
    from core.api import ptrace_warning

    with open_ars(state) as ars:
        report = ars.doctor()
    # what this host lets another process of your user do (README, "What stays outside")
    report["warnings"] = [w for w in (ptrace_warning(),) if w]
    from tui.cli.daemon import _daemons, _mb

    # the warm processes' memory: the recall daemon holds the model and maps the dense index
    report["daemons"] = [{k: d.get(k) for k in ("pid", "rss_mb", "rss_peak_mb", "served", "ready")}
                         for d in _daemons(state)[1]]
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
    for d in report["daemons"]:
        out.print(f"recall daemon pid {d['pid']}: RSS {_mb(d.get('rss_mb'))} (peak {_mb(d.get('rss_peak_mb'))}), "
                  f"{d.get('served', 0)} answers served", highlight=False)
    if not report["daemons"]:
        out.print("recall daemon: none running (the next `ars recall --json` or agent turn starts one)",
                  highlight=False)
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
    for line in report.get("warnings") or []:
        err.print(f"[yellow]warning:[/] {_esc(line)}", highlight=False, soft_wrap=True)

