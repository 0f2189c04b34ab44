"""Messages between the dashboard's worker threads and its views."""

from __future__ import annotations

from textual.message import Message

from core.api import Explanation, InboxRequest, LoopState, RecallResult


class LoopsListed(Message):
    """A full listing of the state directory's loops (at start, or after a rescan)."""

    def __init__(self, states: list[LoopState], problems: list[str], running: set[str]):
        super().__init__()
        self.states = states
        self.problems = problems
        self.running = running


class LoopsArriving(Message):
    """The first screenful of a start-up listing (the newest loops); a LoopsListed follows."""

    def __init__(self, states: list[LoopState], running: set[str], total: int):
        super().__init__()
        self.states = states
        self.running = running
        self.total = total


class LoopsChanged(Message):
    """Some loops changed on disk (the watcher), or an action of ours finished."""

    def __init__(self, states: list[LoopState], gone: set[str], problems: list[str], running: set[str]):
        super().__init__()
        self.states = states
        self.gone = gone
        self.problems = problems
        self.running = running


class StoreChanged(Message):
    """Posted to each view: the loop store moved; redraw what changed."""


class AgentsChanged(Message):
    """Agents' requests in the inbox (MCP clients, Claude Code's gate): the pending ones
    (with those whose waiter gave up a moment ago), and every one that ended (the audit)."""

    def __init__(self, pending: list[InboxRequest], ended: list[InboxRequest] | None = None):
        super().__init__()
        self.pending = pending
        self.ended = ended or []


class EventLogged(Message):
    """Posted to each view: a notification or decision went into the event log."""


class SelectLoop(Message):
    """Posted to each view: select this loop when it shows up (a fork just made)."""

    def __init__(self, loop_id: str):
        super().__init__()
        self.loop_id = loop_id


class AuditLoaded(Message):
    """The audit records of every decided, expired or withdrawn request (the Inbox's ``d``)."""

    def __init__(self, records: dict):
        super().__init__()
        self.records = records


class RequestContextRead(Message):
    """A request's context (the agent's last turns, related memories) read by the Inbox's
    worker. A message, not a call from the thread: one that arrives after its screen was
    removed (a view switch, the app closing) is dropped with the screen, where a call ran
    on a screen whose panes were gone."""

    def __init__(self, key: str, request_id: str, markup: str):
        super().__init__()
        self.key = key
        self.request_id = request_id
        self.markup = markup


class RecallAnswered(Message):
    """The Recall view's search came back (its worker thread): the result and the cut-off
    it was asked for, or the one-line reason the query was refused."""

    def __init__(self, result: RecallResult | None, cut: int, refused: str = ""):
        super().__init__()
        self.result = result
        self.cut = cut
        self.refused = refused


class ExplainAnswered(Message):
    """The Recall view's explanation of one episode came back, or why it could not be given."""

    def __init__(self, explanation: Explanation | None, refused: str = ""):
        super().__init__()
        self.explanation = explanation
        self.refused = refused
