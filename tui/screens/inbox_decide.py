"""The Inbox's decisions: approve, reject, edit, respond on the selected request.

Each asks y/n (and a note, reason or answer) before anything is written, then
the supervisor key's passphrase: for every approval, and for the rest when the
last one typed is older than the lock time (``ArsApp.unlock_signer``, tui/key_guard.py). A
loop's decision goes through ``ArsApp.decide`` (the loop resumes); an agent's
through ``ARS.inbox_decide`` in a thread worker (decided exactly once). A
dialog whose request was decided elsewhere meanwhile is closed (``InboxScreen.sync``).
"""

from __future__ import annotations

import json

from textual import work

from core.api import InboxRequest, LoopState

from tui.modals import ConfirmModal, InputModal, json_object
from tui.widgets.request_pane import is_open
from tui.widgets.status import one_line

KEY_OF = {"approve": "a", "reject": "r", "edit": "e", "respond": "enter"}


class InboxDecisions:
    """Mixed into ``InboxScreen``: the decision actions."""

    # -- decisions -----------------------------------------------------------------------------
    def close_stale_dialog(self, waiting: dict[str, InboxRequest]) -> None:
        """A decision dialog whose request was decided elsewhere (another dashboard, the CLI) or
        whose agent stopped waiting is closed: nothing it would write could count."""
        key = self.deciding
        if key is None:
            return
        r = waiting.get(key)
        if r is not None and is_open(r) and key not in self.busy:
            return
        self.deciding = None
        closed = False
        from tui.unlock_modal import UnlockModal

        for _ in range(3):  # the confirm, and the note or passphrase box over it
            if not isinstance(self.app.screen, (ConfirmModal, InputModal, UnlockModal)):
                break
            screen = self.app.screen
            screen.dismiss(False if isinstance(screen, ConfirmModal) else None)
            closed = True
        if closed:
            why = "its agent stopped waiting" if r is not None else "it was decided elsewhere"
            self.notify(f"{key}: {why}; the dialog was closed and nothing was written", severity="warning",
                        title="Not recorded", timeout=8)

    def _agent_target(self, kind: str) -> InboxRequest | None:
        """The selected agent's request when ``kind`` applies to it (else a notice and None)."""
        r = self.current_agent()
        if r is None:
            return None
        allowed = r.allowed()
        if kind not in allowed:
            what = "an approval request" if r.kind == "approval" else f"a {r.kind}"
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{KEY_OF[k]} ({k})" for k in allowed),
                        severity="warning")
        return r if kind in allowed else None

    async def _decide_agent(self, r: InboxRequest, verdict: str, title: str, body: str, note: str = "",
                            ask_note: bool = False) -> None:
        modal = ConfirmModal(title, body, note=ask_note, request=r)
        ok = await self.app.push_screen_wait(modal)
        if not ok:
            self.notify("nothing written")
            return
        go, signer = await self.app.unlock_signer(  # type: ignore[attr-defined]
            verdict, f"{verdict} {r.id} from {r.source}", r)
        if not go:
            return
        self._send_agent(r.id, verdict, modal.note if ask_note else note, signer, r)
        self.busy[r.id] = r.id  # left out of n and of the next selection until the list drops it
        self.after_decision(r.id)

    @work(thread=True, group="inbox-agent-decision")
    def _send_agent(self, request_id: str, verdict: str, note: str, signer=None, shown=None) -> None:
        from core.api import BadInput

        self.app.decided_here(request_id)  # type: ignore[attr-defined]  (told below, not as "elsewhere")
        try:  # shown: the request as the dialog showed it; the signature covers that copy, never a re-read
            done = self.app.ars.inbox_decide(request_id, verdict, note, signer=signer,  # type: ignore[attr-defined]
                                             shown=shown)
        except BadInput as exc:  # AlreadyDecided says who decided what and when
            self.app.call_from_thread(self.notify, str(exc), severity="error", title="Not recorded", timeout=8)
            self.app.call_from_thread(lambda: self.busy.pop(request_id, None))
        except Exception as exc:  # noqa: BLE001 - an unreadable file: say so, keep the dashboard
            self.app.call_from_thread(self.notify, str(exc), severity="error", title="Not recorded", timeout=8)
            self.app.call_from_thread(lambda: self.busy.pop(request_id, None))
        else:
            unverified = done.decision is not None and not done.decision.is_signed and verdict == "approve"
            self.app.call_from_thread(self.notify, f"{request_id}: {done.status}"
                                      + (f" ({note})" if note else "")
                                      + (": unverified, so the agent's hook will not act on it (its own prompt "
                                         "asks instead; ars supervisor init)" if unverified else ""),
                                      title="Decision recorded", severity="warning" if unverified else "information")
        self.app._load_agents()  # type: ignore[attr-defined]  (the header count and this list, at once)

    def _target(self, kind: str) -> LoopState | None:
        s = self.current()
        if s is None:
            self.notify("nothing selected: the inbox is empty", severity="warning")
            return None
        p = s.pending_approval
        if p is None:
            self.notify(f"{s.loop_id} has no open request", severity="warning")
            return None
        if s.loop_id in self.busy:
            self.notify(f"a decision on {s.loop_id} is already on its way", severity="warning")
            return None
        if kind not in p.allowed:
            what = {"approval": "an approval request", "question": "a question", "unblock": "a blocked loop"}[p.kind]
            self.notify(f"cannot {kind} {what}: use " + " or ".join(f"{KEY_OF[k]} ({k})" for k in p.allowed),
                        severity="warning")
            return None
        return s

    async def _confirm_and_send(self, s: LoopState, kind: str, title: str, body: str, note: str = "",
                                args: dict | None = None, ask_note: bool = False) -> None:
        modal = ConfirmModal(title, body, note=ask_note, request=self.current_request())  # its risk, its clock
        ok = await self.app.push_screen_wait(modal)
        if not ok:
            self.notify("nothing written")
            return
        if ask_note:
            note = modal.note
        shown = self.current_request() if kind != "edit" else None  # an edit runs other arguments than shown
        go, signer = await self.app.unlock_signer(  # type: ignore[attr-defined]
            kind, f"{kind} on loop {s.loop_id}" + (" (the edited arguments)" if kind == "edit" else ""), shown)
        if not go:
            return
        p = s.pending_approval
        assert p is not None
        self.busy[s.loop_id] = p.request_id
        self.cells.pop(s.loop_id, None)  # redraw its row as "sent"
        self.table.remove_rows([s.loop_id])
        self.sync()
        self.after_decision(s.loop_id)
        self.app.decide(s.loop_id, kind, p.request_id, note=note, args=args,  # type: ignore[attr-defined]
                        signer=signer)

    @work(exclusive=True, group="inbox-decision")
    async def action_approve(self) -> None:
        self.deciding = self.current_key()  # a dialog for this row: closed if it is decided elsewhere
        try:
            await self._ask_approve()
        finally:
            self.deciding = None

    async def _ask_approve(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("approve")
            if r is not None:
                await self._decide_agent(r, "approve", f"Approve {r.id} from {r.source}?",
                                         f"{one_line(r.summary, 300)}\nruns: {one_line(r.detail or '-', 300)}",
                                         ask_note=True)
            return
        s = self._target("approve")
        if s is None:
            return
        r = self.current_request()
        a = s.pending_approval.action  # type: ignore[union-attr]
        what = (r.detail if r is not None and r.detail else
                f"{a.tool} {json.dumps(a.args, ensure_ascii=False)}" if a else s.pending_approval.prompt)  # type: ignore[union-attr]
        await self._confirm_and_send(s, "approve", f"Approve on {s.loop_id}?",
                                     f"{s.goal_id}\nruns: {one_line(what, 300)}", ask_note=True)

    @work(exclusive=True, group="inbox-decision")
    async def action_reject(self) -> None:
        self.deciding = self.current_key()  # a dialog for this row: closed if it is decided elsewhere
        try:
            await self._ask_reject()
        finally:
            self.deciding = None

    async def _ask_reject(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("reject")
            if r is None:
                return
            reason = await self.app.push_screen_wait(
                InputModal(f"Reject {r.id} from {r.source}", prompt=f"{one_line(r.summary, 300)}\n\nWhy not? "
                           "(required; the agent is told)", placeholder="the reason"))
            if reason:
                await self._decide_agent(r, "reject", f"Reject {r.id}?", f"reason: {reason}", note=reason)
            return
        s = self._target("reject")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None
        reason = await self.app.push_screen_wait(
            InputModal(f"Reject {p.request_id} of {s.loop_id}", prompt=f"{one_line(p.prompt, 300)}\n\nWhy not? "
                       "(required; kept in the ledger)", placeholder="the reason"))
        if not reason:
            return
        await self._confirm_and_send(s, "reject", f"Reject on {s.loop_id}?", f"reason: {reason}", note=reason)

    @work(exclusive=True, group="inbox-decision")
    async def action_edit(self) -> None:
        self.deciding = self.current_key()  # a dialog for this row: closed if it is decided elsewhere
        try:
            await self._ask_edit()
        finally:
            self.deciding = None

    async def _ask_edit(self) -> None:
        if self.current_agent() is not None:
            self.notify("an agent's request is approved or rejected as it is: reject it with a reason saying "
                        "what to change", severity="warning")
            return
        s = self._target("edit")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None and p.action is not None
        text = await self.app.push_screen_wait(
            InputModal(f"Edit {p.action.tool} for {s.loop_id}", prompt="The new arguments, as a JSON object; "
                       "the edited action is approved.", value=json.dumps(p.action.args, ensure_ascii=False),
                       validate=json_object))
        if not text:
            return
        args = json.loads(text)
        await self._confirm_and_send(s, "edit", f"Approve the edited {p.action.tool} on {s.loop_id}?",
                                     f"args: {json.dumps(p.action.args, ensure_ascii=False)}\n"
                                     f"  →   {json.dumps(args, ensure_ascii=False)}", args=args)

    @work(exclusive=True, group="inbox-decision")
    async def action_respond(self) -> None:
        self.deciding = self.current_key()  # a dialog for this row: closed if it is decided elsewhere
        try:
            await self._ask_respond()
        finally:
            self.deciding = None

    async def _ask_respond(self) -> None:
        if self.current_agent() is not None:
            r = self._agent_target("respond")
            if r is None:
                return
            text = await self.app.push_screen_wait(
                InputModal(f"Answer {r.id} from {r.source}", prompt=one_line(r.summary, 400),
                           placeholder="your answer"))
            if text:
                await self._decide_agent(r, "respond", f"Send this answer to {r.source}?",
                                         f"answer: {text}\nto: {one_line(r.summary, 300)}\n"
                                         f"(it does not run: {one_line(r.detail or '-', 200)})", note=text)
            return
        s = self._target("respond")
        if s is None:
            return
        p = s.pending_approval
        assert p is not None
        label = "Unblock" if p.kind == "unblock" else "Answer"
        text = await self.app.push_screen_wait(
            InputModal(f"{label} {s.loop_id}", prompt=one_line(p.prompt, 400), placeholder="your answer"))
        if not text:
            return
        await self._confirm_and_send(s, "respond", f"Send this {label.lower()} to {s.loop_id}?", text, note=text)
