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
from textual import on, work
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option


class ConfirmModal(ModalScreen[bool]):
    """Ask before a decision is written: ``y`` confirms, ``n`` or escape cancels.

    With ``note=True`` (approvals) it also holds an optional note: ``y`` still
    approves at once; ``tab`` goes to the note, ``enter`` there approves with
    it. The caller reads ``modal.note`` after a yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=True),
        Binding("n", "answer(False)", "No", show=True),
        Binding("escape", "answer(False)", "Cancel", show=False),
        Binding("tab", "to_note", "Note", show=False),
    ]

    def __init__(self, title: str, body: str = "", *, yes: str = "Yes (y)", no: str = "No (n)", note: bool = False,
                 request=None):
        super().__init__(classes="confirm")
        self._title, self._body, self._yes, self._no = title, body, yes, no
        self._ask_note = note
        self._request = request  # an agent's InboxRequest: its risk and its countdown, live
        self.note = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="title", markup=False)
            if self._request is not None:
                yield Static(self._clock_text(), id="clock")
            if self._body:
                yield Static(self._body, id="body", markup=False)
            if self._ask_note:
                yield Input(placeholder="note (optional): tab here, type, enter approves with it", id="note",
                            compact=True)
            with Horizontal(id="buttons"):
                yield Button(self._yes, variant="primary", id="yes")
                yield Button(self._no, id="no")

    def on_mount(self) -> None:
        for box in self.query(Input):
            box.cursor_blink = getattr(self.app, "blink", True)
        self.query_one("#yes", Button).focus()
        if self._request is not None:
            self.set_interval(1.0, self._tick)

    def _clock_text(self) -> str:
        """Risk and time left, so a person deciding sees the agent's clock run."""
        from tui.widgets.request_pane import clock_line

        return clock_line(self._request)

    def _tick(self) -> None:
        for clock in self.query("#clock"):
            clock.update(self._clock_text())

    def action_answer(self, value: bool) -> None:
        self._close(value)

    def action_to_note(self) -> None:
        notes = self.query("#note")
        if notes and not notes.first().has_focus:
            notes.first().focus()
        else:
            self.focus_next()

    def _close(self, value: bool) -> None:
        if value and self._ask_note:
            self.note = self.query_one("#note", Input).value.strip()
        self.dismiss(value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._close(event.button.id == "yes")


class InputModal(ModalScreen[str | None]):
    """One line of text: enter submits (when ``validate`` accepts it), escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, title: str, *, prompt: str = "", value: str = "", placeholder: str = "",
                 validate: Callable[[str], str | None] | None = None, required: bool = True,
                 password: bool = False):
        super().__init__(classes="input-modal")
        self._title, self._prompt, self._value, self._placeholder = title, prompt, value, placeholder
        self._validate = validate
        self._required = required
        self._password = password  # typed text hidden, and kept as typed (no strip)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="title", markup=False)
            if self._prompt:
                yield Static(self._prompt, id="body", markup=False)
            yield Input(value=self._value, placeholder=self._placeholder, id="answer", password=self._password)
            yield Label("", id="error", markup=False)
            yield Static("[b]enter[/] submit · [b]escape[/] cancel", id="hint")

    def on_mount(self) -> None:
        box = self.query_one("#answer", Input)
        box.cursor_blink = getattr(self.app, "blink", True)
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value if self._password else event.value.strip()
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


class EpisodePicker(ModalScreen[str | None]):
    """Pick the episode to explain: the current hits (and those past the
    cut-off) are listed; typing searches episodes by their content (``find``
    runs in a thread); an episode id typed whole is offered as it is.
    ``enter`` on an episode explains it, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True),
                Binding("down", "to_list", "List", show=False)]

    def __init__(self, query: str, k: int, hits: list[tuple[str, str, int]],
                 find: Callable[[str], list[tuple[str, str]]], selected: str | None = None):
        super().__init__(classes="picker")
        self._query, self._k, self._hits, self._find, self._selected = query, k, hits, find, selected

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"Explain an episode for “{self._query}” (k={self._k})", id="title", markup=False)
            yield Input(placeholder="type words it holds (or its id); ↓ to the list, enter explains", id="find")
            yield Label("", id="status", markup=False)
            yield OptionList(id="episodes")
            yield Static("[b]enter[/] explain · [b]↓[/] list · [b]escape[/] cancel", id="hint")

    def on_mount(self) -> None:
        box = self.query_one("#find", Input)
        box.cursor_blink = getattr(self.app, "blink", True)
        self._fill([(eid, snip, f"#{rank}" + (" past cut-off" if rank > self._k else "")) for eid, snip, rank in
                    self._hits], "the hits of this search" if self._hits else "no hits: type words the episode holds")
        box.focus()

    def _fill(self, rows: list[tuple[str, str, str]], what: str) -> None:
        options = self.query_one("#episodes", OptionList)
        options.clear_options()
        for eid, snippet, tag in rows:
            options.add_option(Option(f"{eid}  [{tag}]  {' '.join(snippet.split())[:120]}" if tag else
                                      f"{eid}  {' '.join(snippet.split())[:120]}", id=eid))
        self.query_one("#status", Label).update(f"{len(rows)} · {what}")
        if self._selected is not None:
            try:
                options.highlighted = options.get_option_index(self._selected)
            except Exception:  # noqa: BLE001 - not listed
                options.highlighted = 0 if rows else None
        elif rows:
            options.highlighted = 0

    @on(Input.Changed, "#find")
    def _changed(self, event: Input.Changed) -> None:
        text = event.value.strip()
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.stop()
        self._timer = self.set_timer(0.2, lambda: self._search(text))

    def _search(self, text: str) -> None:
        if not text:
            self._selected = None
            self.on_mount_list()
            return
        self.query_one("#status", Label).update(f"searching “{text}”…")
        self._run(text)

    def on_mount_list(self) -> None:
        self._fill([(e, s, f"#{r}") for e, s, r in self._hits], "the hits of this search")

    @work(thread=True, exclusive=True, group="picker")
    def _run(self, text: str) -> None:
        try:
            found = self._find(text)
        except Exception as exc:  # noqa: BLE001 - say it in the dialog
            self.app.call_from_thread(self.query_one("#status", Label).update, f"search failed: {exc}")
            return
        self.app.call_from_thread(self._found, text, found)

    def _found(self, text: str, found: list[tuple[str, str]]) -> None:
        if self.query_one("#find", Input).value.strip() != text:
            return  # typed on since
        self._selected = None
        rows = [(eid, snip, "") for eid, snip in found]
        if " " not in text and ":" in text:  # an id typed whole comes first
            same = [r for r in rows if r[0] == text]
            rows = (same or [(text, "(the id as typed)", "")]) + [r for r in rows if r[0] != text]
        self._fill(rows, f"episodes holding “{text}”")

    def action_to_list(self) -> None:
        self.query_one("#episodes", OptionList).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one("#episodes", OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected, "#episodes")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HistorySearch(ModalScreen["tuple[str, int] | None"]):
    """Search every loop's history (premises, outputs, reasons, decisions):
    ``search`` runs in a thread; ``enter`` on a hit opens that loop's entry."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True),
                Binding("down", "to_list", "List", show=False)]

    def __init__(self, search: Callable[[str], list[dict]]):
        super().__init__(classes="picker")
        self._search_fn = search
        self._hits: dict[str, tuple[str, int]] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Search every loop's history", id="title")
            yield Input(placeholder="words in a premise, an output, a reason… enter searches", id="find")
            yield Label("premises, hypotheses, outputs, reasons, decisions: the entry where they came in",
                        id="status", markup=False)
            yield OptionList(id="episodes")
            yield Static("[b]enter[/] search / open · [b]↓[/] list · [b]escape[/] cancel", id="hint")

    def on_mount(self) -> None:
        box = self.query_one("#find", Input)
        box.cursor_blink = getattr(self.app, "blink", True)
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        self.query_one("#status", Label).update(f"searching “{text}” in every loop's history…")
        self._run(text)

    @work(thread=True, exclusive=True, group="history-search")
    def _run(self, text: str) -> None:
        try:
            hits = self._search_fn(text)
        except Exception as exc:  # noqa: BLE001 - say it in the dialog
            self.app.call_from_thread(self.query_one("#status", Label).update, f"search failed: {exc}")
            return
        self.app.call_from_thread(self._found, text, hits)

    def _found(self, text: str, hits: list[dict]) -> None:
        options = self.query_one("#episodes", OptionList)
        options.clear_options()
        self._hits = {}
        for n, h in enumerate(hits):
            key = f"h{n}"
            self._hits[key] = (h["loop_id"], h["index"])
            options.add_option(Option(f"{h['loop_id']} #{h['index']} {h['status']}  {h['field']}: "
                                      f"{' '.join(str(h['snippet']).split())[:110]}", id=key))
        self.query_one("#status", Label).update(f"{len(hits)} loops hold “{text}”" +
                                                (" (the first 100)" if len(hits) >= 100 else ""))
        if hits:
            options.highlighted = 0
            options.focus()

    def action_to_list(self) -> None:
        self.query_one("#episodes", OptionList).focus()

    @on(OptionList.OptionSelected, "#episodes")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._hits.get(event.option.id or ""))

    def action_cancel(self) -> None:
        self.dismiss(None)


def json_object(text: str) -> str | None:
    """``InputModal`` validator: a JSON object, or why not."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"not JSON: {exc}"
    return None if isinstance(value, dict) else "give a JSON object, e.g. {\"cmd\": \"make test\"}"


# Every key of every view (tests/tui/app/test_tui_laptop.py checks each binding is here).
HELP = {
    "Anywhere": [
        ("1 2 3 4 5 6", "Loops · Inbox · Recall · Checkpoints · Health · Context"),
        ("n", "the most urgent request waiting for you (nearest deadline, then risk, then age); again: the next"),
        ("l", "show / hide the event log: every notification and decision, times in your zone"),
        ("/", "this view's filter or search box"),
        ("esc", "leave the box, clear the filter"),
        ("↑ ↓ PgUp PgDn Home End", "move in the list (the detail pane follows)"),
        ("J K shift+↓ shift+↑", "scroll the detail pane (Detail, Request, Score, Explain, the entry) a few lines, "
                                "the list keeps the keys"),
        ("shift+PgDn shift+PgUp", "scroll the detail pane a page"),
        ("tab shift+tab", "the next / previous pane or box"),
        ("ctrl+p", "command palette: views, actions, themes (the theme you pick is kept for the next run)"),
        ("?", "this help"),
        ("q", "quit"),
    ],
    "Loops (1)": [
        ("R", "resume the selected loop (runs to its next exit)"),
        ("c", "cancel the selected loop (asks a reason, then y/n)"),
        ("enter", "open its history in Checkpoints"),
        ("w", "only loops waiting for you (waiting/blocked), or all"),
        ("s S", "sort by the next column / reverse (or click a header)"),
        ("y", "copy the loop id"),
    ],
    "Inbox (2)": [
        ("a", "approve (tab to add an optional note)"),
        ("r", "reject (asks for a reason)"),
        ("e", "edit the proposed action's arguments, then approve"),
        ("enter", "respond to a question or unblock with guidance"),
        ("d", "the decided requests instead (the audit: kind, risk, what ran, who decided when, the signature, "
              "what happened next), and back"),
        ("y", "copy the request id"),
        ("", "every decision asks y/n before it is written; the footer shows the keys the item takes; after it "
             "the next most urgent request is selected"),
    ],
    "Recall (3)": [
        ("enter", "search (in the query box)"),
        ("+ = -", "k up / down by 5, and search again"),
        ("m", "page past the cut-off: the next hits below k, dimmed"),
        ("x", "explain an episode (pick it by its content): the verdict from the fused rank and each tier's rank"),
        ("t", "tiers: every tier side by side / as the agent asks"),
        ("d", "forget the selected memory everywhere, after a confirmation that shows it (signed)"),
    ],
    "Checkpoints (4)": [
        ("[ ]", "previous / next history entry, with the diff (what a person would change, no bookkeeping)"),
        ("f", "fork a new loop from the selected entry (the fork is selected)"),
        ("R", "resume the selected loop"),
        ("/", "search every loop's history: premises, outputs, reasons"),
        ("y", "copy the loop id"),
    ],
    "Health (5)": [
        ("", "tiers, breaker, sync backlog, ledger and drift, live; recall latency sparkline"),
    ],
    "Context (6)": [
        ("↑ ↓ tab", "sessions that got turn contexts; their turns; what the selected turn was given"),
        ("e", "pick the memory you expected: per turn, why it was not given (explain's verdict)"),
        ("g", "read the receipts again"),
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
                yield Static(f"[b $text-accent]{escape(section)}[/]", classes="section")
                for key, what in rows:
                    # two columns, so a long description wraps under itself, not under the keys
                    with Horizontal(classes="row"):
                        yield Static(f"[b]{escape(key)}[/]", classes="key")
                        yield Static(escape(what), classes="what")
            yield Static("escape closes", id="hint")

    def action_close(self) -> None:
        self.dismiss(None)
