"""Modal screens: confirm a decision (y/n), ask for text (a reason, an answer,
edited arguments, an episode id), and the keys help."""

from __future__ import annotations

import json
from typing import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class ConfirmModal(ModalScreen[bool]):
    """Ask before a decision is written: ``y`` confirms, ``n`` or escape cancels."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=True),
        Binding("n", "answer(False)", "No", show=True),
        Binding("escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, title: str, body: str = "", *, yes: str = "Yes (y)", no: str = "No (n)"):
        super().__init__(classes="confirm")
        self._title, self._body, self._yes, self._no = title, body, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="title", markup=False)
            if self._body:
                yield Static(self._body, id="body", markup=False)
            with Horizontal(id="buttons"):
                yield Button(self._yes, variant="primary", id="yes")
                yield Button(self._no, id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")


class InputModal(ModalScreen[str | None]):
    """One line of text: enter submits (when ``validate`` accepts it), escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, title: str, *, prompt: str = "", value: str = "", placeholder: str = "",
                 validate: Callable[[str], str | None] | None = None, required: bool = True):
        super().__init__(classes="input-modal")
        self._title, self._prompt, self._value, self._placeholder = title, prompt, value, placeholder
        self._validate = validate
        self._required = required

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="title", markup=False)
            if self._prompt:
                yield Static(self._prompt, id="body", markup=False)
            yield Input(value=self._value, placeholder=self._placeholder, id="answer")
            yield Label("", id="error", markup=False)
            yield Static("[b]enter[/] submit · [b]escape[/] cancel", id="hint")

    def on_mount(self) -> None:
        box = self.query_one("#answer", Input)
        box.cursor_blink = getattr(self.app, "blink", True)
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        problem = None
        if self._required and not text:
            problem = "this cannot be empty"
        elif self._validate is not None:
            problem = self._validate(text)
        if problem:
            self.query_one("#error", Label).update(problem)
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)


def json_object(text: str) -> str | None:
    """``InputModal`` validator: a JSON object, or why not."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"not JSON: {exc}"
    return None if isinstance(value, dict) else "give a JSON object, e.g. {\"cmd\": \"make test\"}"


HELP = {
    "Anywhere": [
        ("1 2 3 4", "Loops · Inbox · Recall · Checkpoints"),
        ("/", "focus the search or filter box"),
        ("ctrl+p", "command palette: views, actions, themes"),
        ("?", "this help"),
        ("q", "quit"),
    ],
    "Loops (1)": [
        ("↑ ↓", "select a loop; the detail pane follows"),
        ("R", "resume the selected loop (runs to its next exit)"),
        ("c", "cancel the selected loop (asks first)"),
        ("enter", "open its history in Checkpoints"),
    ],
    "Inbox (2)": [
        ("a", "approve the proposed action"),
        ("r", "reject (asks for a reason)"),
        ("e", "edit the proposed action's arguments, then approve"),
        ("enter", "respond to a question or unblock with guidance"),
        ("", "every decision asks y/n before it is written"),
    ],
    "Recall (3)": [
        ("enter", "search (in the query box)"),
        ("x", "explain an episode: per tier stored, tokens, score, rank, cut-off"),
        ("t", "tiers: every tier side by side / as the agent asks"),
    ],
    "Checkpoints (4)": [
        ("[ ]", "previous / next history entry, with the diff"),
        ("f", "fork a new loop from the selected entry"),
        ("R", "resume the selected loop"),
    ],
}


class HelpModal(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", show=True)]

    def __init__(self) -> None:
        super().__init__(classes="help")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Label("Keys", id="title")
            for section, rows in HELP.items():
                yield Static(f"[b $accent]{escape(section)}[/]", classes="section")
                for key, what in rows:
                    yield Static(f"  [b]{escape(key):<8}[/] {escape(what)}", classes="row")
            yield Static("escape closes", id="hint")

    def action_close(self) -> None:
        self.dismiss(None)
