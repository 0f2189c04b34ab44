"""The one facade the front ends (CLI, dashboard, MCP server, agent hooks) call.

Everything a person or an agent can do goes through ``ARS``; every name a front end needs
from core is here (re-exported), in ``core.models`` or ``core.errors`` (an agent's hook, run once
per tool call, takes its few names from the lean ``core.hook_api`` instead). Errors a person must
fix are ``BadInput`` (the CLI exits 2). The work lives in the core module each method names.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from core.capture.facade import CaptureMethods
from core.config import Settings, load_settings
from core.context.facade import TurnContextFacade
from core.errors import BadQuery
from core.hook_api import HOOK_EXPORTS
from core.inbox import all_requests, supervisor_key
from core.inbox.audit_facade import AuditMethods
from core.loop.verdicts import LoopVerdicts
from core.infra.lazy_names import Table, each, module_getattr
from core.infra.state_dir import open_state_dir
from core.loop import changed_files, history_search, service as loop_service
from core.memory import health_report, sync_runs
from core.memory.episode_text import EpisodePages
from core.memory.memory import Memory
from core.memory.remember import MAX_REMEMBER, remembered_episode
from core.memory.warm import warm_up
from core.models import Explanation, RecallResult

if TYPE_CHECKING:  # imported lazily: a fresh `ars recall` loads neither the loop, ingestion nor the sync
    from datetime import datetime

    from core.consumers.consumer import SyncReport
    from core.govern.forget import ForgetReport, Selection
    from core.govern.rescan import ScanReport
    from core.inbox import Inbox, InboxRequest
    from core.ingest.pipeline import FileSummary, IngestReport
    from core.loop.models import CheckResult, GoalFrame, HistoryEntry, LoopState
    from core.loop.rehydrate import RehydrateReport

BadInput = BadQuery

# -- re-exported for the front ends (they import core.api, core.models and core.errors only) ------
# Loaded on first use (core/infra/lazy_names.py), so a fresh `ars recall` loads none of these modules.
# The hooks' names (the gate policy, the pin check, private files, the store cursor) are named once,
# in core/hook_api.py, and are here too.
REEXPORTED: Table = {
    **HOOK_EXPORTS,
    **each("core.loop.models", "LoopState", "HistoryEntry", "OPEN_STATUSES", "STATUSES", "TERMINAL"),
    **each("core.loop.checkpoints", "LoopBusy", "CorruptCheckpoint"),
    **each("core.loop.decisions", "CorruptDecision", "pending_problem"),
    **each("core.loop.rehydrate", "render_markdown"),
    **each("core.loop.goals", "parse_json"),
    **each("core.inbox", "InboxRequest", "MAX_DETAIL", "MAX_META", "MAX_SUMMARY", "CorruptRequest",
           "UnknownRequest"),
    **each("core.inbox.loops", "decided"),
    **each("core.inbox.store", "new_request_id"),
    **each("core.infra.once", "AlreadyDecided"),
    **each("core.inbox.signing", "SETUP_HINT", "BadPassphrase", "SigningError", "input_hash", "short",
           "unlock", "verify_decision", "public_fingerprint", "has_key", "MIN_PASSPHRASE"),
    **each("core.inbox.key_memory", "ptrace_warning", "dumpable", "die_with_parent"),
    **each("core.infra.proc_mem", "rss_mb"),
    "audit_outcome": ("core.inbox.audit", "outcome"),  # what came of a request (ARS.inbox_outcome records it)
    **each("core.inbox.audit_text", "AuditRecord", "audit_lines", "audit_text"),
    **each("core.infra.local_time", "local_time", "local_short", "local_zone"),
    "inbox_urgency": ("core.inbox.urgency", "urgency"),
    "gate_rules": ("core.inbox.gate", None),
    **each("core.memory.scoring", "FUSION", "FUSION_DEPTH", "RRF_K", "TIER_WEIGHT", "fusion_weights"),
    **each("core.memory.confidence", "cue", "weak_result"),
    **each("core.memory.episode_text", "EpisodeText", "PAGE_CHARS", "MAX_PAGE_CHARS"),
    **each("core.govern.redact", "PLACEHOLDER_RE", "redact_text"),
    **each("core.govern.forget", "ForgetFailed"),
    **each("core.infra.fsutil", "atomic_write", "fsync_dir"),
    **each("core.infra.state_kind", "MARKER", "state_kind"),
    **each("core.config", "config_error"),
    **each("core.context.models", "TurnContext", "InjectedMemory", "Receipt"),
    **each("core.context.why", "WhyNot"),
    **each("core.context.when", "when_text"),
    **each("core.ingest", "FORMATS"),
}


__getattr__ = module_getattr(REEXPORTED, globals(), __name__)


class ARS(CaptureMethods, TurnContextFacade, EpisodePages, AuditMethods, LoopVerdicts):
    def __init__(self, settings: Settings | None = None, *, create: bool = True, **overrides: Any):
        self.settings = settings or load_settings(**overrides)
        open_state_dir(Path(self.settings.state_dir), create)
        self.memory = Memory(self.settings)
        self.recover()

    def recover(self) -> None:
        """Repair what a crash left: a forget or redaction cut short, ledger events
        SQLite has not applied (never waits for another process's writer)."""
        from core.govern.interrupted import recover  # not at import: `import core.api` stays light

        try:
            recover(self.memory, wait=False)
        except Exception:  # noqa: BLE001 - a broken SQLite still leaves the other tiers
            pass

    @property
    def identity(self):
        """This state directory's namespace, host id and agent (core/team/identity.py)."""
        return self.memory.identity

    @property
    def state_dir(self) -> Path:
        return Path(self.settings.state_dir)

    def close(self) -> None:
        self.memory.close()

    def __enter__(self) -> "ARS":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- memory ----------------------------------------------------------------
    def recall(self, query: str, k: int = 10, tiers: str | Sequence[str] | None = None,
               scope: str | None = None) -> RecallResult:
        """``scope``: ``agent=NAME,host=NAME`` (core/team/scope.py), None: the whole namespace."""
        return self.memory.recall(query, k=k, tiers=tiers, scope=scope)

    def explain(self, query: str, episode_id: str, k: int = 10,
                tiers: str | Sequence[str] | None = None) -> Explanation:
        return self.memory.explain(query, episode_id, k=k, tiers=tiers)

    def ingest(self, paths: Iterable[str | Path], fmt: str = "auto",
               progress: Callable[[Path, FileSummary], None] | None = None, force: bool = False,
               on_wait: Callable[[str], None] | None = None) -> IngestReport:
        """``on_wait`` hears, once, that another writer holds the state directory."""
        from core.ingest.pipeline import ingest
        return ingest(self.memory, paths, fmt=fmt, progress=progress, force=force, on_wait=on_wait)

    def watcher(self, paths: Iterable[str | Path], fmt: str = "auto", idle_seconds: float = 300.0,
                on_report=None, on_finalized=None):
        from core.ingest.watch import Watcher
        return Watcher(self.memory, paths, fmt=fmt, idle_seconds=idle_seconds,
                       on_report=on_report, on_finalized=on_finalized)

    # -- durability (core/memory/sync_runs.py) ---------------------------------------
    def dense_available(self) -> bool:
        """Whether the dense tier has vectors to search (asking it costs a model load)."""
        return self.memory.dense_in_default()

    def sync_status(self) -> dict[str, Any]:
        """Pending and failed sync counts, per-store counts, drift, last error, embedding backlog."""
        return sync_runs.sync_status(self.memory, self.settings)

    def sync_run(self, max_seconds: float = 300.0) -> SyncReport:
        """Drain every ledger consumer (Neo4j when configured, embeddings); ``ok``: none failed."""
        return sync_runs.sync_run(self.memory, self.settings, max_seconds)

    def embed_new(self, max_seconds: float = 60.0):
        """Embed the episodes written since the last run (a loop's own, after it ran), without
        waiting: None when embedding is off or another process is at it."""
        return sync_runs.embed_new(self.memory, self.settings, max_seconds)

    def backfill(self, clear: bool = False, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Neo4j rebuilt from SQLite; resumes a stopped one; ``progress(episodes done, total)``."""
        return sync_runs.backfill(self.memory, self.settings, clear, progress)

    def rename_host(self, new_host: str) -> dict[str, Any]:
        """Claim a new host id (core/team/claim.py): the next sync pushes the whole ledger
        under it. HostClaimed (BadInput) when another state directory holds it."""
        return sync_runs.rename_host(self.memory, self.settings, new_host)

    def pull(self, reset: bool = False, max_seconds: float = 300.0):
        """Pull the team's other hosts' episodes into SQLite now; ``reset``: from the start."""
        return sync_runs.pull(self.memory, reset, max_seconds)

    def enrich_pending(self, limit: int | None = None) -> tuple[int, int]:
        """Ask the model again for episodes marked pending: (upgraded, still pending)."""
        return sync_runs.enrich_pending(self.memory, self.settings, limit)

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Recreate memory.sqlite from the ledger (a stopped rebuild goes on: ``rebuild_resumed_at``);
        skipped lines: ``ledger_problems()``; ``progress(ledger bytes applied, ledger size)``."""
        return sync_runs.rebuild(self.memory, progress)

    def rebuild_resumed_at(self) -> int:
        """The ledger offset the last rebuild went on from (0: it started from the beginning)."""
        return self.memory.rebuild_resumed_at

    def ledger_problems(self) -> list[str]:
        """Ledger lines the last apply skipped, as ``ledger.jsonl:LINE: what is wrong``."""
        return [p.describe(self.memory.ledger.path) for p in self.memory.ledger_problems]

    # -- health ------------------------------------------------------------------
    def doctor(self) -> dict[str, Any]:
        """Each tier's status and latency, the sync status, the team identity, the settings."""
        return health_report.doctor_report(self.memory, self.settings, self.state_dir, self.sync_status)

    def health(self) -> dict[str, Any]:
        """``doctor()`` for a live view: plus the Neo4j breaker and the ledger file. Read only."""
        return health_report.live_report(self.memory, self.doctor())

    def episode_count(self) -> int | None:
        """Episodes in the SQLite store (None when it cannot be read), for empty states."""
        try:
            return self.memory.sqlite.count()
        except Exception:  # noqa: BLE001 - a broken store is shown as unknown
            return None

    # -- loops ---------------------------------------------------------------------
    # The autonomous loop (core/loop). Errors a person must fix are BadInput; LoopBusy and
    # CorruptCheckpoint are failures (another process runs the loop; a checkpoint is unreadable).
    @property
    def loops(self):
        """The loop engine of this state directory (created on first use)."""
        if getattr(self, "_loops", None) is None:
            self._loops = loop_service.new_engine(self.state_dir, self.memory, self.settings, self.supervisor_pin)
        return self._loops

    @staticmethod
    def load_goal(goal: "str | Path | dict[str, Any]") -> "GoalFrame":
        """A GoalFrame from a goal file path, a dict, or plain goal text (``str``)."""
        from core.loop.goals import load_goal
        return load_goal(goal)

    def loop_start(self, goal: "str | Path | dict[str, Any] | GoalFrame", policy: str = "offline",
                   run: bool = True) -> "LoopState":
        """Create a loop for ``goal`` (a GoalFrame, or what ``load_goal`` takes) and (by default)
        run it to its first exit."""
        return loop_service.start(self.loops, goal, policy, run)

    def loop_resume(self, loop_id: str) -> "LoopState":
        """Continue a loop from its checkpoint (after a crash, or once a decision is recorded)."""
        return self.loops.run(loop_id)

    def loop_list(self, bases: "list[str] | None" = None) -> "tuple[list[LoopState], list[str]]":
        """Every loop's (or ``bases``') latest state, newest first; one line per unreadable checkpoint."""
        listing = self.loops.store.list(bases)
        return listing.states, [f"{p.file}: {p.error}" for p in listing.problems]

    def loop_bases(self) -> "list[str]":
        """Every loop's checkpoint file base, newest first, without reading one (for ``loop_list``)."""
        return self.loops.store.bases()

    def loop_show(self, loop_id: str) -> "LoopState":
        loaded = self.loops.store.load(loop_id)
        self.loops.warnings.extend(loaded.warnings)
        return loaded.state

    def loop_decide(self, loop_id: str, kind: str, *, note: str = "", args: "dict[str, Any] | None" = None,
                    request_id: str | None = None, resume: bool = True, signer: Any = None) -> "LoopState":
        """Record a person's decision (exactly once per request; signed where a supervisor key
        is set up) and resume the loop."""
        self._require_signer(signer)
        loop_service.record_decision(self.loops, self.state_dir, loop_id, kind, note, args, request_id, signer)
        return self.loops.run(loop_id) if resume else self.loop_show(loop_id)

    def loop_cancel(self, loop_id: str, reason: str = "cancelled by a person") -> "LoopState":
        return self.loops.cancel(loop_id, reason)

    def loop_history(self, loop_id: str) -> "list[HistoryEntry]":
        """The loop's history entries (what replay steps through), oldest first."""
        entries, _ = self.loops.store.history(loop_id)
        return entries

    def loop_search(self, text: str, limit: int = 100,
                    stop: "Callable[[], bool] | None" = None) -> list[dict[str, Any]]:
        """Loops whose history holds every word of ``text``, one hit per loop; ``stop()`` ends it."""
        return history_search.search_histories(self.state_dir, text, limit, stop)

    def loop_entry(self, loop_id: str, index: int) -> "HistoryEntry":
        return loop_service.history_entry(self.loop_history(loop_id), loop_id, index)

    def loop_fork(self, loop_id: str, at: int, run: bool = False) -> "LoopState":
        """A new loop from history entry ``at`` (parent recorded); the original is untouched."""
        state = self.loops.fork(loop_id, at)
        return self.loops.run(state.loop_id) if run else state

    @staticmethod
    def check(text: str) -> "CheckResult":
        """First-principles verdicts (SOUL.md) on reasoning text, with evidence."""
        return loop_service.check(text)

    def rehydrate(self, write: bool = True) -> "RehydrateReport":
        """The startup context (open loops, next steps, memories, health, a next focus); written
        to ``<state>/startup-context.md`` unless ``write`` is false."""
        from core.loop.rehydrate import rehydrate
        return rehydrate(self.state_dir, self.memory, self.loops.store, write=write)

    # the dashboard's: which loops changed files belong to, several loops at once, which run now
    def loop_ids_for_paths(self, paths: Iterable[str | Path]) -> tuple[set[str], bool]:
        """The loops whose files are among ``paths``; True: a name did not map back, list them all."""
        return changed_files.loop_ids_for_paths(self.state_dir, paths)

    def loop_states(self, loop_ids: Iterable[str]) -> "tuple[dict[str, LoopState], set[str], list[str]]":
        """Each loop's latest state; the ids gone; one line per unreadable checkpoint."""
        return loop_service.load_states(self.loops.store, loop_ids)

    def loop_running(self, loop_id: str) -> bool:
        return self.loops.store.is_running(loop_id)

    def loop_run_alone(self, loop_id: str) -> "LoopState":
        """Run a loop to its next exit on an engine of its own (several loops at once, from threads)."""
        engine = loop_service.new_engine(self.state_dir, self.memory, self.settings, self.supervisor_pin, self.loops)
        return engine.run(loop_id)

    # -- the supervisor's key (core/inbox/signing.py) ---------------------------------------
    # The key a front end pinned when it started (the dashboard): its loop engines act only
    # on decisions that key signed. None: the state directory's key, if any.
    supervisor_pin: str | None = None

    def supervisor_fingerprint(self) -> str | None:
        """This state directory's key's fingerprint (None before ``ars supervisor init``); what a
        verifier trusts is the pinned one, not this."""
        return supervisor_key.fingerprint(self.state_dir)

    def supervisor_init(self, passphrase: bytes, old_passphrase: bytes | None = None) -> str:
        """Create (or, with the current passphrase, replace) the supervisor's key; its fingerprint."""
        return supervisor_key.init_key(self.state_dir, passphrase, old_passphrase)

    def supervisor_unlock(self, passphrase: bytes) -> Any:
        """The supervisor's key unlocked in this process's memory (a ``signing.Signer``)."""
        return supervisor_key.unlock_key(self.state_dir, passphrase)

    def _require_signer(self, signer: Any) -> None:
        supervisor_key.require_signer(self.state_dir, signer)

    # -- inbox -----------------------------------------------------------------------
    # Every request for a person (core/inbox/all_requests.py): agents' and each loop's open one
    # (id "loop:<loop>:<request>"), each decided exactly once. AlreadyDecided, UnknownRequest: BadInput.
    @property
    def inbox(self) -> "Inbox":
        """The inbox of this state directory (agents' requests)."""
        from core.inbox import Inbox
        if getattr(self, "_inbox", None) is None:
            self._inbox = Inbox(self.state_dir)
        return self._inbox

    def inbox_list(self, status: str | None = None, *, every: bool = False,
                   since: "datetime | None" = None) -> "list[InboxRequest]":
        """Every open request, newest first; ``every``: decided ones too (the audit); ``since``: from then."""
        return all_requests.list_requests(self.inbox, self.loop_list, lambda: self.loops.store, status, every, since)

    @staticmethod
    def inbox_request_of(state: "LoopState") -> "InboxRequest | None":
        """A loop's open request as the inbox shows it (no I/O), or None."""
        from core.inbox.loops import from_pending
        return from_pending(state)

    @staticmethod
    def inbox_context(request: "InboxRequest", state: "LoopState | None" = None, turns: int = 6) -> list[str]:
        """What the agent did before asking, one line each: a loop's last steps, or its transcript's."""
        from core.inbox.context import loop_steps, request_context
        return loop_steps(state, turns) if state is not None else request_context(request.meta, turns)

    def inbox_get(self, request_id: str) -> "InboxRequest":
        """One request (an agent's, or ``loop:<loop>:<request>``) with its decision, if any."""
        return all_requests.get_request(self.inbox, self.state_dir, request_id, self.loop_show,
                                        lambda: self.loops.store)

    def inbox_decide(self, request_id: str, verdict: str, note: str = "", signer: Any = None,
                     shown: "InboxRequest | None" = None) -> "InboxRequest":
        """Decide a request exactly once (a loop's resumes it); signed where a supervisor key is set up.
        ``shown``: an agent's request as the person saw it: what a signature covers (never a re-read)."""
        return all_requests.decide_request(self.inbox, self.state_dir, request_id, verdict, note, signer,
                                           require_signer=self._require_signer, get=self.inbox_get,
                                           loop_decide=self.loop_decide, shown=shown)

    def request_approval(self, source: str, action: str, details: str = "", risk: str = "medium",
                         kind: str = "approval", meta: "dict[str, Any] | None" = None, binds: str = "",
                         expires_in: float | None = None, exact: str | None = None,
                         request_id: str | None = None) -> "InboxRequest":
        """A new pending request from an agent (durable when this returns). ``binds``: what a signed
        decision is bound to (default the source's kind); ``expires_in``: seconds until nobody waits;
        ``exact``: the whole input when ``details`` was cut to fit (a decision signs its hash)."""
        return self.inbox.create(source=source, kind=kind, summary=action, detail=details, risk=risk, meta=meta,
                                 binds=binds, expires_in=expires_in, exact=exact, request_id=request_id)

    # -- memory the supervisor governs (core/govern) ---------------------------------
    MAX_REMEMBER = MAX_REMEMBER  # characters of text one remember() takes

    def remember(self, text: str, summary: str | None = None, topics: Sequence[str] = (),
                 session_id: str | None = None, source: str = "manual") -> str:
        """Store ``text`` as an episode (core/memory/remember.py), secrets redacted; its id."""
        episode = remembered_episode(text, summary, topics, session_id, source)
        self.memory.store([episode])
        return episode.id

    def forget_select(self, ids: Sequence[str] = (), *, session: str | None = None, source: str | None = None,
                      query: str | None = None) -> "Selection":
        """What ``forget`` would remove (listed before it goes); BadQuery when nothing."""
        from core.govern.forget import select
        return select(self.memory, ids=ids, session=session, source=source, query=query)

    def forget(self, selection: "Selection", why: str = "", signer: Any = None) -> "ForgetReport":
        """Forget ``selection`` here before returning (Neo4j at the next sync, the team at its next
        pull); with a supervisor key, only with their unlocked signer: it is their decision."""
        from core.govern.forget import forget
        self._require_signer(signer)
        return forget(self.memory, selection, why=why, signer=signer)

    def redact_scan(self, dry_run: bool = False, signer: Any = None) -> "ScanReport":
        """Secrets already stored, rewritten as placeholders everywhere (core/govern/rescan.py)."""
        from core.govern.rescan import scan
        if not dry_run:
            self._require_signer(signer)
        return scan(self.memory, dry_run=dry_run)

    def export(self, fmt: str = "jsonl", *, since: str | None = None, session: str | None = None,
               scope: str | None = None) -> "Iterator[str]":
        """The episodes as they are now (forgotten ones excluded), as lines of ``fmt``."""
        from core.govern.export import export
        return export(self.memory, fmt, since=since, session=session, scope=scope)

    # -- used by the CLI and the recall daemon --------------------------------------------------------
    def warm(self, deadline: float = 10.0, rounds: int = 12) -> None:
        """Pay a first recall's costs now, each tier's deadline raised to at least ``deadline``
        s (core/memory/warm.py): the recall daemon does this before it answers anyone."""
        warm_up(self.memory, deadline, rounds)

    def refresh(self) -> None:
        """Catch up with the state directory as a fresh process does on open (``recover``)."""
        self.recover()

    def graph_troubled(self) -> bool:
        """Whether Neo4j's recent answers failed (its breaker is not closed)."""
        neo = self.memory.neo4j
        return neo is not None and neo.breaker.troubled()

    def warm_graph(self) -> None:
        """Plan Neo4j's search once, off any read path (a restarted Neo4j's cold JVM
        misses every read deadline until it has)."""
        if self.memory.neo4j is not None:
            self.memory.neo4j.warm()
