"""The dashboard app's actions on loops (mixed into ``ArsApp``), each in a thread
worker: a person's decision recorded exactly once and the loop resumed here
unless another process runs it, resume, fork, cancel; each says how it went."""

from __future__ import annotations

from typing import Any, Iterable

from textual import work

from core.api import BadInput, LoopState

from tui.messages import LoopsChanged, SelectLoop

RAN_TITLE = {"done": "Loop done", "waiting_human": "Loop waits for you", "blocked": "Loop blocked",
             "aborted": "Loop aborted", "active": "Loop paused"}


class LoopActions:
    """Mixed into ``ArsApp``."""

    # -- actions on loops (thread workers) -----------------------------------------------------
    def _mine(self, loop_id: str, on: bool) -> None:
        with self._ours_lock:
            (self._ours.add if on else self._ours.discard)(loop_id)

    def _refresh_loops(self, ids: Iterable[str]) -> None:
        states, gone, problems = self.ars.loop_states(ids)
        running = {i for i, s in states.items() if s.status == "active" and self._is_running(i)}
        self.post_message(LoopsChanged(list(states.values()), gone, problems, running))

    def _say(self, message: str, severity: str = "information", title: str = "") -> None:
        self.call_from_thread(self.notify, message, severity=severity, title=title, timeout=8)

    def _run(self, loop_id: str) -> LoopState | None:
        """Run a loop to its next exit on its own engine; None when another process has it."""
        from core.api import LoopBusy

        if self.ars.loop_running(loop_id):
            return None
        self._mine(loop_id, True)
        self._refresh_loops([loop_id])
        try:
            return self.ars.loop_run_alone(loop_id)
        except LoopBusy:
            return None
        finally:
            self._mine(loop_id, False)
            self.embed_new()  # the loop's own episodes: recallable by meaning too, without `ars sync run`

    @work(thread=True, group="embed", exclusive=False)
    def embed_new(self) -> None:
        """Embed what the ledger gained (a worker of its own: a loop's next run does not wait on it)."""
        try:
            self.ars.embed_new()
        except Exception as exc:  # noqa: BLE001 - the loop ran; its vectors come with the next sync
            self._say(f"embedding the new episodes failed: {exc}", "warning", "Embedding")

    @work(thread=True, group="engine")
    def decide(self, loop_id: str, kind: str, request_id: str, note: str = "",
               args: dict[str, Any] | None = None, signer: Any = None) -> None:
        """Record a person's decision (exactly once), then resume the loop here
        unless another process runs it (that process applies the decision)."""
        from core.api import CorruptCheckpoint

        self.decided_here(f"loop:{loop_id}:{request_id}")  # its own notice below, not "decided elsewhere"
        try:
            self.ars.loop_decide(loop_id, kind, note=note, args=args, request_id=request_id, resume=False,
                                 signer=signer)
        except (BadInput, CorruptCheckpoint) as exc:
            self._say(str(exc), "error", "Not recorded")
            self.call_from_thread(self._decision_failed, loop_id)
            self._refresh_loops([loop_id])
            return
        past = {"approve": "approved", "reject": "rejected", "edit": "edited and approved",
                "respond": "answered"}[kind]
        if not self.resume_in_process:
            self._say(f"{loop_id}: {past}; recorded for the process that runs it", title="Decision recorded")
            self._refresh_loops([loop_id])
            return
        try:
            state = self._run(loop_id)
        except BadInput as exc:  # e.g. an LLM loop with no model configured here
            self._say(f"{loop_id}: {past} and recorded; not resumed here: {exc}", "warning", "Decision recorded")
            self._refresh_loops([loop_id])
            return
        except Exception as exc:  # noqa: BLE001 - the decision stands; say why the run stopped
            self._say(f"{loop_id}: {past}; the run failed: {exc}", "error", "Decision recorded")
            self._refresh_loops([loop_id])
            return
        if state is None:
            self._say(f"{loop_id}: {past}; another process runs this loop and applies it", title="Decision recorded")
        else:
            self._say(f"{loop_id}: {past} → {state.status}" + (f" ({state.exit_reason})" if state.exit_reason else ""),
                      "information" if state.status not in ("blocked", "aborted") else "warning",
                      RAN_TITLE.get(state.status, f"Loop {state.status}"))
        self._refresh_loops([loop_id])

    def _decision_failed(self, loop_id: str) -> None:
        for view in self._views:
            hook = getattr(view, "decision_failed", None)
            if callable(hook):
                hook(loop_id)

    @work(thread=True, group="engine")
    def resume(self, loop_id: str) -> None:
        from core.api import CorruptCheckpoint

        try:
            state = self._run(loop_id)
        except (BadInput, CorruptCheckpoint) as exc:
            self._say(str(exc), "error", "Not resumed")
            return
        if state is None:
            self._say(f"{loop_id} is being run by another process", "warning", "Not resumed")
        else:
            self._say(f"{loop_id} → {state.status}" + (f" ({state.exit_reason})" if state.exit_reason else ""),
                      "information" if state.status not in ("blocked", "aborted") else "warning",
                      RAN_TITLE.get(state.status, f"Loop {state.status}"))
        self._refresh_loops([loop_id])

    @work(thread=True, group="engine")
    def fork(self, loop_id: str, at: int) -> None:
        try:
            state = self.ars.loop_fork(loop_id, at)
        except BadInput as exc:
            self._say(str(exc), "error", "Not forked")
            return
        self._say(f"{state.loop_id} forked from {loop_id}@{at} ({state.status}, step {state.current_step}); "
                  "it is selected: R resumes it", title="Forked")
        self._refresh_loops([state.loop_id])
        self.call_from_thread(self.select_everywhere, state.loop_id)

    def select_everywhere(self, loop_id: str) -> None:
        """Every view selects ``loop_id`` (when its row or node shows up)."""
        for view in self._views:
            view.post_message(SelectLoop(loop_id))

    @work(thread=True, group="engine")
    def cancel(self, loop_id: str, reason: str) -> None:
        from core.api import LoopBusy

        try:
            state = self.ars.loop_cancel(loop_id, reason)
        except (BadInput, LoopBusy) as exc:
            self._say(str(exc), "error", "Not cancelled")
            return
        self._say(f"{loop_id} → {state.status}", title="Cancelled")
        self._refresh_loops([loop_id])

