"""The dashboard's real passphrase prompt (README, "The real prompt").

It names the key pinned at the dashboard's start, this run's check words (also in
the header; tui/key_guard.py), the decision, and for a request exactly what will run
with the first 12 hex digits of its hash (``ars inbox show ID`` prints the same).
The passphrase goes into a ``SecretInput`` (bytes, never a str); enter unlocks the key
with it on a thread (``unlock``), wipes it, and dismisses with the signer; a wrong one is
said in the prompt, which stays open with the agent's clock. Escape dismisses with None.
"""

from __future__ import annotations

import math

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from tui.widgets.secret_input import SecretInput


def short_hash(h: str) -> str:
    hexpart = h.split(":", 1)[-1][:12]
    return " ".join(hexpart[i:i + 4] for i in range(0, len(hexpart), 4))


class UnlockModal(ModalScreen["object | None"]):  # the signer, or None
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, *, fingerprint: str, check: str, what: str, request=None, keeps: int = 0,
                 shared: str = "", unlock, backoff) -> None:
        super().__init__(classes="input-modal unlock")
        self._fp, self._check, self._what, self._request = fingerprint, check, what, request
        self._keeps, self._shared = keeps, shared
        self._unlock = unlock  # unlock(passphrase) -> signer; BadPassphrase for a wrong one
        self._backoff = backoff  # the dashboard's (tui/passphrase_backoff.py): a new prompt does not reset it

    def compose(self) -> ComposeResult:
        rows = [f"key    {self._fp}", f"check  {self._check}   (the header's words: a prompt without them is not ARS's)",
                f"sign   {self._what}"]
        r = self._request
        if r is not None:
            detail = " ".join(str(r.detail or "").split())
            if detail:
                rows.append(f"runs   {detail[:400]}" + ("…" if len(detail) > 400 else ""))
            rows.append(f"hash   {short_hash(r.exact_hash())}   (ars inbox show {r.id})")
        if self._keeps:
            rows.append(f"then   rejections and answers are signed without asking for {self._keeps // 60} min")
        if self._shared:
            rows.append(f"note   this runs inside {self._shared}: any process of your user can read this screen "
                        "and type into it; only your passphrase signs")
        with Vertical(id="dialog"):
            yield Label("ARS · sign with the supervisor key", id="title", markup=False)
            if r is not None:  # risk and the agent's clock ("no deadline" for a loop's own request)
                from tui.widgets.request_pane import clock_line

                yield Static(clock_line(r), id="clock")
            yield Static("\n".join(rows), id="body", markup=False)
            yield SecretInput(id="secret")
            yield Label("", id="error", markup=False)
            yield Static("[b]enter[/] sign · [b]escape[/] cancel", id="hint")

    def on_mount(self) -> None:
        self.query_one(SecretInput).focus()
        if self.query("#clock"):
            self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        from tui.widgets.request_pane import clock_line

        for clock in self.query("#clock"):
            clock.update(clock_line(self._request))

    def on_secret_input_submitted(self, event: SecretInput.Submitted) -> None:
        event.stop()
        box = self.query_one(SecretInput)
        if not box.chars:
            self.query_one("#error", Label).update("type the supervisor passphrase (escape cancels)")
            return
        wait = self._backoff.wait_left()
        if wait > 0:
            box.clear()
            self.query_one("#error", Label).update(
                f"a wrong passphrase was typed just before: type it again in {math.ceil(wait)} s (escape cancels)")
            return
        self.query_one("#error", Label).update("unlocking…")
        self._try(box.take())

    @work(thread=True, exclusive=True, group="unlock")
    def _try(self, passphrase: bytearray) -> None:
        from core.api import BadPassphrase, SigningError, wipe

        try:
            signer = self._unlock(passphrase)
        except BadPassphrase as exc:
            self._backoff.failed()
            self.app.call_from_thread(self._wrong, f"{exc}: type it again in {math.ceil(self._backoff.wait_left())} s")
            return
        except SigningError as exc:
            self.app.call_from_thread(self._wrong, f"{exc}: type it again")
            return
        finally:
            wipe(passphrase)
        self._backoff.succeeded()
        self.app.call_from_thread(self.dismiss, signer)

    def _wrong(self, why: str) -> None:
        """A wrong passphrase: said here, the prompt stays (the agent's clock runs on above it)."""
        self.query_one("#error", Label).update(f"{why} (escape cancels)")
        self.query_one(SecretInput).focus()

    def action_cancel(self) -> None:
        self.query_one(SecretInput).clear()
        self.dismiss(None)
