"""The progress bar of ``ars rebuild`` and ``ars sync backfill`` on a terminal: drawn
before the first batch says the total (a None total once broke it), fits 80 columns."""

from __future__ import annotations

import io

from rich.console import Console

from tui.cli import progress_bar as pb


def test_the_bar_draws_before_and_after_the_total_is_known_within_80_columns(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(pb, "err", Console(file=screen, force_terminal=True, width=80, color_system=None))
    with pb.progress_bar("rebuild", "MB of the ledger", scale=2**20) as step:
        assert step is not None
        step(88 * 2**20, 176 * 2**20)
    drawn = screen.getvalue()
    assert "rebuild" in drawn and "50%" in drawn and "88 / 176 MB of the ledger" in drawn
    lines = [line for chunk in drawn.split("\r") for line in chunk.split("\n")]
    assert max(len(Console().render_str(x).plain) for x in lines) <= 80


def test_no_bar_off_a_terminal_or_with_json(monkeypatch):
    monkeypatch.setattr(pb, "err", Console(file=io.StringIO(), force_terminal=False))
    with pb.progress_bar("rebuild") as step:
        assert step is None
    monkeypatch.setattr(pb, "err", Console(file=io.StringIO(), force_terminal=True))
    with pb.progress_bar("rebuild", show=False) as step:
        assert step is None


def test_ctrl_c_inside_a_command_says_what_is_kept(monkeypatch, capsys):
    """typer turns a KeyboardInterrupt inside a command into a silent Exit(130): the CLI says it."""
    import pytest

    from tui.cli import main as cli_main

    def stopped():
        raise KeyboardInterrupt

    class Exited(Exception):
        pass

    def leave(code):
        raise Exited(code)

    import typer

    app = typer.Typer()
    app.command()(stopped)
    monkeypatch.setattr(cli_main, "_lean_app", lambda argv: app)
    monkeypatch.setattr(cli_main, "_exit_now", leave)
    monkeypatch.setattr(cli_main.sys, "argv", ["ars"])
    with pytest.raises(Exited) as done:
        cli_main.main()
    assert done.value.args == (130,)
    assert "interrupted: anything acknowledged before is kept" in capsys.readouterr().err
