"""The supervision dashboard: a Textual app with four modes (views).

* ``1`` Loops, ``2`` Inbox, ``3`` Recall, ``4`` Checkpoints, ``5`` Health, ``6`` Context
  (``tui/screens/``); ``n`` from any view selects the next request waiting
  for a person; ``l`` shows the event log (every notification and decision);
* a new request rings the bell, raises a desktop notification and counts in
  the window title (``widgets/notify_term.py``); ``n`` goes to it;
* a watcher thread (watchfiles) reports changed checkpoint and decision files;
  only the loops they belong to are read again, in the thread, and the views
  redraw only the rows whose loop changed;
* every call into ``core`` (listing, recall, decisions, runs, fork) runs in a
  thread worker: the UI thread never waits on I/O;
* decisions resume the loop in this process (``resume_in_process``) unless
  another process is running it, in which case the decision is recorded in the
  state directory and that process applies it.

The app calls ``core.api.ARS`` only.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from pathlib import Path
from typing import Any, Iterable

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen

from core.api import ARS, InboxRequest, LoopState

from tui import event_journal
from tui.idle_gc import IdleCollector
from tui.app_audit import AppAudit
from tui.app_endings import AppEndings
from tui.app_engine import LoopActions
from tui.app_notices import AppNotices
from tui.messages import LoopsArriving, LoopsChanged, LoopsListed, StoreChanged
from tui.modals import HelpModal
from tui.screens.loops import LoopsScreen
from tui.store import ATTENTION, LoopStore
from tui.widgets.event_log import Event
from tui.widgets.notify_term import TerminalNotifier

STYLES = Path(__file__).resolve().parents[1] / "styles"
WATCH_DEBOUNCE_MS = 150
AGENT_POLL_S = 1.0  # agents' requests are also listed this often (a missed watcher event cannot hide one)
EVENTS_KEPT = 500
IDLE_GC_CHECK_S = 0.5  # how often the idle collector looks (tui/idle_gc.py)
KEY_LOCK_CHECK_S = 1.0  # how often the kept key's lock time is checked (tui/key_guard.py)
# loops read first at start, newest first: a screenful shows while the rest load (reading and checking one
# loop's state is ~1.5 ms: 1,000 loops took ~2 s to appear, all at once)
FIRST_LOOPS = 60


def _screen(module: str, name: str) -> Screen:
    """A view other than the first, imported when it is first shown: its widgets (Tree,
    Sparkline, ...) are not on the path to the first paint."""
    from importlib import import_module

    return getattr(import_module(f"tui.screens.{module}"), name)()


class ArsApp(AppAudit, AppEndings, AppNotices, LoopActions, App[None]):
    TITLE = "ARS"
    SUB_TITLE = "supervision dashboard"
    CSS_PATH = [STYLES / "app.tcss"]
    MODES = {
        "loops": LoopsScreen,
        "inbox": lambda: _screen("inbox", "InboxScreen"),
        "recall": lambda: _screen("recall", "RecallScreen"),
        "checkpoints": lambda: _screen("checkpoints", "CheckpointsScreen"),
        "health": lambda: _screen("health", "HealthScreen"),
        "context": lambda: _screen("context", "ContextScreen"),
    }
    DEFAULT_MODE = "loops"
    BINDINGS = [
        Binding("1", "switch_mode('loops')", "Loops", show=False),
        Binding("2", "switch_mode('inbox')", "Inbox", show=False),
        Binding("3", "switch_mode('recall')", "Recall", show=False),
        Binding("4", "switch_mode('checkpoints')", "Checkpoints", show=False),
        Binding("5", "switch_mode('health')", "Health", show=False),
        Binding("6", "switch_mode('context')", "Context", show=False),
        Binding("n", "next_waiting", "Next waiting", show=True),
        Binding("l", "toggle_log", "Log", show=True),
        Binding("slash", "focus_search", "Search", show=True, key_display="/"),
        Binding("question_mark", "help", "Help", show=True, key_display="?"),
        Binding("q", "quit", "Quit", show=True),
    ]

    inbox_count: reactive[int] = reactive(0)
    live_status: reactive[str] = reactive("")
    trust_status: reactive[str] = reactive("")  # whose decisions count: the header says it
    log_open: reactive[bool] = reactive(False)

    def __init__(self, ars: ARS, *, resume_in_process: bool = True, watch: bool = True,
                 initial_mode: str | None = None, blink: bool = True):
        super().__init__()
        self.blink = blink  # text cursors blink (snapshot tests turn it off)
        self.ars = ars
        self.resume_in_process = resume_in_process
        self.watching = watch
        self.store = LoopStore()
        self.running: set[str] = set()  # loops some process is running (as last seen)
        self._ours: set[str] = set()  # loops this app is running now
        self._ours_lock = threading.Lock()
        self._views: list[Screen] = []
        self._stop = threading.Event()
        self._initial_mode = initial_mode
        self.episode_count: int | None = None
        self.problems: list[str] = []
        self.agent_requests: dict[str, InboxRequest] = {}  # agents' pending requests, by id
        self.ended_requests: dict[str, InboxRequest] = {}  # agents' decided, expired, withdrawn ones (audit)
        self.audit_init()  # every ended request's record, for the Inbox's decided filter (tui/app_audit.py)
        self.endings_init()  # requests that end elsewhere are told (tui/app_endings.py)
        self.announced: str | None = None  # the row key of the request announced last (n goes there)
        self.term = TerminalNotifier(self)  # bell, desktop notification, window title
        self._agents_seen = False  # the first listing is not news
        self.events: deque[Event] = deque(event_journal.load(ars.state_dir, EVENTS_KEPT),
                                          maxlen=EVENTS_KEPT)  # the event log (l), earlier runs' too
        self._held: list[dict[str, Any]] = []  # notices held while a decision dialog is open
        self.next_first = False  # n from another view: the Inbox selects its oldest item when it shows
        self.recall_samples: deque[tuple[float, float]] = deque(maxlen=300)  # (monotonic s, recall ms)
        self.idle_gc = IdleCollector()
        self._switching = False  # inside switch_mode (see delay_update)
        # The supervisor key, pinned now: a key put in the state directory later (by an agent
        # that can write it) is refused. Unlocked by its passphrase for each approval, kept for
        # rejections and answers until ARS_KEY_LOCK_AFTER (tui/key_guard.py), in this process only.
        self.pin: str | None = ars.supervisor_fingerprint()
        ars.supervisor_pin = self.pin
        from tui.key_guard import KeyGuard

        self.key_guard = KeyGuard(self.pin, ars.settings.key_lock_after)

    # -- start and stop -----------------------------------------------------------------------
    def on_mount(self) -> None:
        from tui import prefs

        theme = prefs.load(self.ars.state_dir).get("theme")
        if isinstance(theme, str) and theme in self.available_themes and theme != self.theme:
            self.theme = theme  # the one chosen last time
        self.watch(self, "theme", lambda name: prefs.save(self.ars.state_dir, theme=name), init=False)
        self.live_status = self._where("loading…")
        self.trust_status = self._trust()
        if self._initial_mode and self._initial_mode != self.DEFAULT_MODE:
            self.switch_mode(self._initial_mode)
        self.load_all()
        self.set_interval(IDLE_GC_CHECK_S, self.idle_gc.tick)
        if self.pin is not None:
            self.set_interval(KEY_LOCK_CHECK_S, self._lock_when_due)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self.idle_gc.input_seen()  # someone is typing: no full collection now
        await super().on_event(event)

    def on_unmount(self) -> None:
        self._stop.set()
        self.idle_gc.typing_over()  # the thresholds are the process's, not this app's

    async def action_quit(self) -> None:
        self._stop.set()
        self.exit()

    def _where(self, what: str) -> str:
        from tui.widgets import status

        state = self.ars.state_dir.name if status.STILL else str(self.ars.state_dir)
        if len(state) > 40:
            state = "…" + state[-39:]
        return f"{what} · {state}"  # the path last: a narrow header cuts it first

    def get_css_variables(self) -> dict[str, str]:
        """Textual's, with every text colour made readable on this theme (tui/widgets/contrast.py)."""
        from tui.widgets.contrast import readable

        variables = readable(super().get_css_variables(), self.current_theme.dark)
        self.theme_variables = variables
        return variables

    # -- the supervisor's key (tui/key_guard.py) ------------------------------------------------
    @property
    def signer(self) -> Any:
        """The key unlocked by the last passphrase typed, or None."""
        return self.key_guard.signer_now()

    def _trust(self) -> str:
        from core.api import short

        return self.key_guard.trust_line(short(self.pin or ""))

    def _lock_when_due(self) -> None:
        if self.key_guard.due():
            self.trust_status = self._trust()
            self.notify(f"the supervisor key locked {self.key_guard.lock_after / 60:g} min after its passphrase "
                        "was typed; the next decision asks for it", title="Key locked")

    async def unlock_signer(self, verdict: str = "", what: str = "", request: Any = None) -> tuple[bool, Any]:
        """(go on, the signer to sign with): no key pinned → (True, None), an unverified
        decision (ARS's own loops act on it; agents' hooks do not); else the key, unlocked
        with its passphrase for every approval, edit and forget, and for the rest when the
        last passphrase is older than the lock time. (False, None): not unlocked."""
        if self.pin is None:
            return True, None
        guard = self.key_guard
        if not guard.needs_passphrase(verdict):
            return True, guard.signer_now()
        from core.api import short
        from tui.key_guard import shared_screen
        from tui.unlock_modal import UnlockModal

        # the prompt unlocks: a wrong passphrase is said in it and it stays open, the agent's clock running
        signer = await self.push_screen_wait(UnlockModal(
            fingerprint=self.pin, check=guard.check, what=what or verdict or "this decision", request=request,
            keeps=int(guard.lock_after), shared=shared_screen(), unlock=self.ars.supervisor_unlock,
            backoff=guard.backoff))
        if signer is None:
            self.notify("nothing written: the key stayed locked")
            return False, None
        if signer.fingerprint != self.pin:
            self.notify(f"REFUSED: the key in the state directory is {short(signer.fingerprint)}, not the key "
                        f"{short(self.pin)} this dashboard started with; nothing was signed", severity="error",
                        title="Not recorded", timeout=12)
            return False, None
        guard.typed(signer)
        self.trust_status = self._trust()
        return True, signer

    # -- views register to be told when the store moves -------------------------------------
    def register_view(self, view: Screen) -> None:
        if view not in self._views:
            self._views.append(view)

    def _broadcast(self) -> None:
        for view in self._views:
            view.post_message(StoreChanged())

    # -- loading and watching (threads) -----------------------------------------------------------
    @work(thread=True, exclusive=True, group="listing")
    def load_all(self) -> None:
        self.episode_count = self.ars.episode_count()
        self._load_agents()
        bases = self.ars.loop_bases()
        if len(bases) > FIRST_LOOPS:
            head, _problems = self.ars.loop_list(bases[:FIRST_LOOPS])
            self.post_message(LoopsArriving(head, self._running_of(head), len(bases)))
            rest, problems = self.ars.loop_list(bases[FIRST_LOOPS:])
            # read the first ones again: they are the loops most likely to have moved while the rest
            # loaded, and the watcher starts only after this listing (~0.1 s for 60 loops)
            head, again = self.ars.loop_list(bases[:FIRST_LOOPS])
            states = sorted(head + rest, key=lambda s: s.updated_at, reverse=True)
            problems = again + problems
        else:
            states, problems = self.ars.loop_list()
        self.post_message(LoopsListed(states, problems, self._running_of(states)))

    def _running_of(self, states: list[LoopState]) -> set[str]:
        return {s.loop_id for s in states if s.status == "active" and self._is_running(s.loop_id)}

    @work(thread=True, exclusive=True, group="watch")
    def watch_state(self) -> None:
        """Report changed loops until the app stops (the worker's own thread)."""
        import watchfiles

        root = self.ars.state_dir
        relevant = ("checkpoints", "approvals", "inbox")

        def wanted(_change: Any, path: str) -> bool:
            p = Path(path)
            return p.parent.name in relevant and not p.name.startswith(".")

        try:
            for changes in watchfiles.watch(root, watch_filter=wanted, stop_event=self._stop,
                                            debounce=WATCH_DEBOUNCE_MS, step=30, rust_timeout=500,
                                            yield_on_timeout=False, raise_interrupt=False):
                if self._stop.is_set():
                    return
                self._reload([p for _c, p in changes])
        except Exception as exc:  # noqa: BLE001 - a watcher failure leaves a working dashboard
            self.call_from_thread(self.notify, f"live updates stopped: {exc}", severity="error", timeout=10)
            self.call_from_thread(setattr, self, "live_status", self._where("not watching (press ctrl+r?)"))

    def _reload(self, paths: Iterable[str]) -> None:
        """Read the loops behind changed files (worker thread) and post them."""
        paths = list(paths)
        if any(Path(p).parent.name == "inbox" for p in paths):
            self._load_agents()
            paths = [p for p in paths if Path(p).parent.name != "inbox"]
            if not paths:
                return
        ids, rescan = self.ars.loop_ids_for_paths(paths)
        if rescan:
            states, problems = self.ars.loop_list()
            self.post_message(LoopsListed(states, problems, self._running_of(states)))
            return
        if not ids:
            return
        states, gone, problems = self.ars.loop_states(ids)
        running = {i for i, s in states.items() if s.status == "active" and self._is_running(i)}
        self.post_message(LoopsChanged(list(states.values()), gone, problems, running))

    def _is_running(self, loop_id: str) -> bool:
        with self._ours_lock:
            if loop_id in self._ours:
                return True
        return self.ars.loop_running(loop_id)

    def on_loops_arriving(self, msg: LoopsArriving) -> None:
        if self.store.loaded:  # a full listing came first (a rescan): it has these and more
            return
        self.store.apply(msg.states)
        self.running |= msg.running
        self._after_change([])  # drawn now; no notices yet: they are what the start found, not news
        self.live_status = self._where(f"{len(self.store.states)} of {msg.total} loops · loading…")

    def on_loops_listed(self, msg: LoopsListed) -> None:
        first = not self.store.loaded
        changes = self.store.replace_all(msg.states, msg.problems)
        # Thousands of loop states are millions of long-lived objects: keep them
        # out of the cyclic collector, whose full passes otherwise stall keys for ~1 s.
        self.idle_gc.freeze_now()
        self.running = set(msg.running)
        self._after_change([] if first else changes)
        if first:
            if msg.problems:
                self.notify(f"{len(msg.problems)} checkpoint(s) could not be read: {msg.problems[0]}",
                            severity="warning", timeout=8)
            if self.watching:
                self.watch_state()
                self.set_interval(AGENT_POLL_S, self.poll_agents)
        self.live_status = self._where(f"{len(self.store.states)} loops · "
                                       + ("live" if self.watching else "not watching"))

    def on_loops_changed(self, msg: LoopsChanged) -> None:
        changes = self.store.apply(msg.states, msg.gone)
        was = set(self.running)
        self.running -= {s.loop_id for s in msg.states} | set(msg.gone)
        self.running |= msg.running
        self.store.touch(was ^ self.running)  # running <-> paused redraws the row
        self._after_change(changes)
        self.live_status = self._where(f"{len(self.store.states)} loops · "
                                       + ("live" if self.watching else "not watching"))

    def _after_change(self, changes) -> None:
        self._count()
        self.tell_loop_endings(changes)
        for c in changes:
            if c.new in ATTENTION and c.old != c.new:
                s = c.state
                what = s.pending_approval.prompt if s.pending_approval else (s.exit_reason or c.new)
                title = "Waiting for you (n)" if c.new == "waiting_human" else "Blocked (n)"
                self.announce(s.loop_id, title, f"{s.goal_id} ({s.loop_id}): {what}",
                              "warning" if c.new == "waiting_human" else "error")
        self._broadcast()

    def action_toggle_log(self) -> None:
        self.log_open = not self.log_open

    # -- navigation -------------------------------------------------------------------------------
    def switch_mode(self, mode: str):
        """Textual's own: the views redraw what changed when they resume (``sync``)."""
        self._switching = mode != self.current_mode
        self.__dict__["_switch_hold"] = None
        try:
            return super().switch_mode(mode)
        finally:
            self._switching = False
            held = self.__dict__.get("_switch_hold")
            if held is not None:
                # the new view handles its ScreenResume (and redraws in it) before this runs
                self.screen.call_later(self._end_hold, held, "view")

    def delay_update(self, delay: float = 0.05) -> None:
        """Textual's ``switch_mode`` holds every update for a fixed 50 ms so the new
        screen is not drawn before it is ready: that was 50 ms of every view switch
        (and of ``n``). A switch holds updates only until the new view has handled
        its ScreenResume, where it redraws, so the first frame it gets is already
        current; 50 ms stays the longest hold, as in Textual."""
        if not self._switching:
            super().delay_update(delay)
            return
        self._begin_batch()
        held = {"on": True, "ended_by": None}
        self.__dict__["_switch_hold"] = held
        self.set_timer(delay, lambda: self._end_hold(held, "timer"), name="switch_hold")

    def _end_hold(self, held: dict, by: str) -> None:
        if not held["on"]:
            return  # ended already (by the view, or by the timer)
        held["on"] = False
        held["ended_by"] = by
        self._end_batch()
        if not self._batch_count:
            self.screen.refresh()

    def action_focus_search(self) -> None:
        focus = getattr(self.screen, "focus_search", None)
        if callable(focus):
            focus()
            return
        self.switch_mode("recall")
        self.call_after_refresh(lambda: getattr(self.screen, "focus_search", lambda: None)())

    def action_help(self) -> None:
        self.push_screen(HelpModal())

    def show_loop_history(self, loop_id: str) -> None:
        """Open Checkpoints on one loop (from the Loops view)."""
        self.switch_mode("checkpoints")
        self.call_after_refresh(lambda: getattr(self.screen, "select_loop", lambda _i: None)(loop_id))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Loops", "View every loop: status, step, budget (1)", lambda: self.switch_mode("loops"))
        yield SystemCommand("Inbox", "Requests and blockers waiting for you (2)", lambda: self.switch_mode("inbox"))
        yield SystemCommand("Recall", "Search memory with per-tier scores (3)", lambda: self.switch_mode("recall"))
        yield SystemCommand("Checkpoints", "Goals, loops and history: replay, fork, resume (4)",
                            lambda: self.switch_mode("checkpoints"))
        yield SystemCommand("Health", "Tiers, breaker, sync backlog, ledger, drift, recall latency (5)",
                            lambda: self.switch_mode("health"))
        yield SystemCommand("Context", "What each agent turn was given from memory, and why not (6)",
                            lambda: self.switch_mode("context"))
        yield SystemCommand("Next waiting", "The next request waiting for you (n)", self.action_next_waiting)
        yield SystemCommand("Event log", "Every notification and decision of this session (l)",
                            self.action_toggle_log)
        for name, help_, action in getattr(screen, "PALETTE", ()):
            yield SystemCommand(name, help_, getattr(screen, f"action_{action}"))
        yield SystemCommand("Help", "Every key of every view (?)", self.action_help)
        yield from super().get_system_commands(screen)
