"""``ars context``: what an agent's turn gets from memory, and what each turn got.

    ars context "PROMPT" [--session ID] [--agent A] [--budget N] [--previous TEXT] [--json] [--no-record]
    ars context show SESSION [--expect EPISODE_ID] [--json]

The first prints exactly the block a turn with that message would get (``ARS.context``,
the function the agents' hooks call): the text on stdout, a note on stderr when there is
one. ``--json``: ``text`` byte for byte and the memories (episode id, score, time,
characters). Like a turn, it never fails on ARS: a missing state directory or a message
with nothing to search prints nothing and says why in one line (exit 0). ``show`` lists a
session's receipts, turn by turn; ``--expect`` says, per turn, why that memory was not
given (``ARS.context_why_not``, which reuses explain).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape as _esc
from rich.table import Table

from tui.cli.common import JsonOpt, StateOpt, err, fail, open_ars, out


def context_command(
    words: Annotated[list[str], typer.Argument(help="the user's message; or: show SESSION", metavar="PROMPT")],
    session: Annotated[Optional[str], typer.Option("--session", help="the agent's session: memories given earlier in it are left out")] = None,
    agent: Annotated[Optional[str], typer.Option("--agent", help="the agent asking (recorded in the receipt)")] = None,
    budget: Annotated[Optional[int], typer.Option("--budget", min=0, help="characters of the block (default $ARS_CONTEXT_BUDGET, 1500)")] = None,
    previous: Annotated[Optional[str], typer.Option("--previous", help="the turn before: the agent's last reply")] = None,
    turn: Annotated[Optional[str], typer.Option("--turn", help="the turn's id (recorded in the receipt)")] = None,
    no_record: Annotated[bool, typer.Option("--no-record", help="do not write a receipt or remember what this session was given")] = False,
    expect: Annotated[Optional[str], typer.Option("--expect", help="show: why this episode was not given, per turn")] = None,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print what a turn with PROMPT would get from memory; `ars context show SESSION` lists what each turn got."""
    if len(words) == 2 and words[0] == "show":
        _show(words[1], expect, state, as_json)
        return
    if len(words) != 1:
        fail('give the message as one argument (quote it): ars context "did the restart finish?", '
             "or ars context show SESSION")
    if expect is not None:
        fail("--expect goes with ars context show SESSION")
    _context(words[0], session, agent, budget, previous, turn, not no_record, state, as_json)


def _context(prompt: str, session, agent, budget, previous, turn, record: bool, state: Path | None,
             as_json: bool) -> None:
    from core.api import ARS, load_settings
    from tui.cli import error_map

    try:
        ars = ARS(load_settings(state_dir=state), create=False)
    except Exception as exc:  # noqa: BLE001 - a turn without ARS gets nothing; so does this
        said = error_map.opening(exc)
        if said is None:
            raise
        _print({"text": "", "memories": [], "latency_ms": 0.0, "note": f"nothing injected: {said[1]}"}, as_json)
        return
    with ars:
        ars.context_prepare()  # a fresh process: the tiers' set-up is not the turn's (a warm agent's is done)
        got = ars.context(prompt, session=session, agent=agent, previous=previous, budget=budget, turn=turn,
                          record=record)
    from core.api import when_text

    reply = got.model_dump(mode="json")
    for m, shown in zip(reply["memories"], got.memories):
        m["time"] = when_text(_parse(shown.ts))
    _print(reply, as_json)


def _parse(ts: str | None):
    from datetime import datetime

    try:
        return datetime.fromisoformat(ts) if ts else None
    except ValueError:
        return None


def _print(reply: dict, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        return
    if reply["text"]:
        sys.stdout.write(reply["text"] + "\n")
    if reply["note"]:
        err.print(f"[yellow]note:[/] {_esc(reply['note'])}", highlight=False, soft_wrap=True)


def _show(session: str, expect: str | None, state: Path | None, as_json: bool) -> None:
    with open_ars(state) as ars:
        receipts = ars.context_receipts(session)
        why = ars.context_why_not(session, expect, limit=len(receipts) or 1) if expect and receipts else []
    if as_json:
        rows = [r.model_dump(mode="json") for r in receipts]
        by_at = {w.at: w.model_dump(mode="json") for w in why}
        for i, row in enumerate(rows, 1):
            row["turn"] = row["turn"] or f"#{i}"
            if expect:
                row["expected"] = by_at.get(row["at"])
        sys.stdout.write(json.dumps({"session": session, "turns": rows}, ensure_ascii=False) + "\n")
        return
    if not receipts:
        out.print(f"no turn of session {session!r} got a context here (ars context show SESSION lists the "
                  "receipts of a session id as the agent named it)", highlight=False)
        return
    title = f"context of session {session!r}: {len(receipts)} turns" + (f"; expected: {expect}" if expect else "")
    table = Table(title=_esc(title), title_justify="left", expand=True)
    table.add_column("turn", overflow="fold", max_width=12)
    table.add_column("when (UTC)", overflow="fold", max_width=10)
    table.add_column("injected", overflow="fold", ratio=3)
    table.add_column("chars", no_wrap=True)
    table.add_column("ms", no_wrap=True, justify="right")
    table.add_column("note", overflow="fold", ratio=2)
    if expect:
        table.add_column("why not the expected one", overflow="fold", ratio=3)
    reasons = {w.at: w for w in why}
    for i, r in enumerate(receipts, 1):
        mems = _esc("\n".join(f"{m.episode_id} ({m.score:.2f}, {m.chars} ch)" for m in r.memories)) or "[dim]nothing[/]"
        cells = [_esc(r.turn or f"#{i}"), r.at[:19].replace("T", " "), mems, f"{r.chars}/{r.budget}", f"{r.latency_ms:.0f}",
                 _esc(r.note)]
        if expect:
            w = reasons.get(r.at)
            cells.append(_esc(w.reason + (f"\nexplain: {w.explain}" if w.explain else "")) if w else "")
        table.add_row(*cells)
    out.print(table)
