"""The one facade the front ends (CLI, dashboard) call.

Everything a person can do goes through ``ARS``; front ends own no storage
logic. Errors a person must fix are ``BadInput`` (the CLI exits 2 on them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from core.config import Settings, load_settings
from core.infra.fsutil import private_dir, tighten_tree
from core.models import Explanation, RecallResult, TierReport
from core.memory.memory import BadQuery, Memory

from typing import TYPE_CHECKING  # -- loops: type names only

if TYPE_CHECKING:  # imported lazily: a fresh `ars recall` loads neither the loop, ingestion nor the sync
    from core.ingest.pipeline import FileSummary, IngestReport
    from core.consumers.neo4j_push import SyncReport
    from core.loop.models import CheckResult, GoalFrame, HistoryEntry, LoopState
    from core.loop.rehydrate import RehydrateReport
    from datetime import datetime

    from core.inbox import Inbox, InboxRequest

BadInput = BadQuery


class ARS:
    def __init__(self, settings: Settings | None = None, *, create: bool = True, **overrides: Any):
        self.settings = settings or load_settings(**overrides)
        state = Path(self.settings.state_dir)
        if not state.is_dir():
            if not create:
                raise BadInput(
                    f"state directory {state} does not exist: run `ars ingest` first (a new team host: "
                    f"`mkdir -p {state}`, then `ars sync run` pulls the namespace), "
                    "or pass --state / set ARS_STATE_DIR to an existing one"
                )
            private_dir(state)
        elif state.stat().st_mode & 0o077:
            # written by an older ARS under umask 022: make it private once
            tighten_tree(state)
            private_dir(state)
        self.memory = Memory(self.settings)
        try:
            # a crash between a ledger fsync and the SQLite commit is repaired here
            self.memory.recover(wait=False)
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

    def pull(self, reset: bool = False, max_seconds: float = 300.0):
        """Pull the namespace's other hosts' episodes into SQLite now;
        ``reset``: from the start (a new graph, or to check every host again)."""
        from core.consumers import team_pull

        if self.memory.neo4j is None:
            raise BadInput("neo4j is not configured: set ARS_NEO4J_URI (see README, Running a team)")
        if reset:
            team_pull.reset(self.memory)
        return team_pull.pull(self.memory, max_seconds=max_seconds)

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

    # -- durability ----------------------------------------------------------------
    def dense_available(self) -> bool:
        """Whether the dense tier has vectors to search (an embedder is set and
        `ars sync run` embedded something): asking it costs a model load."""
        return self.memory.dense_in_default()

    def sync_status(self) -> dict[str, Any]:
        """Pending and failed sync counts, per-store counts, drift, last error;
        ``embeddings``: the embedding backlog (episodes not embedded yet)."""
        status = self.memory.sync.status()
        try:
            status["embeddings"] = self.memory.embeddings.status()
        except Exception as exc:  # noqa: BLE001 - one consumer's trouble never hides the others'
            from core.memory.tiers.base import one_line

            status["embeddings"] = {"embedder": self.settings.embedder, "last_error": one_line(exc)}
        return status

    def sync_run(self, max_seconds: float = 300.0) -> SyncReport:
        """Drain every ledger consumer: Neo4j (when configured), then the
        embeddings (vectors.sqlite, and their copy in Neo4j's vector index).
        Works without Neo4j; ``ok`` is false when any consumer failed."""
        from core.consumers.neo4j_push import SyncReport

        if self.memory.neo4j is not None:
            report = self.memory.sync.run(max_seconds=max_seconds)
        else:
            report = SyncReport(error="")
            report.neo4j = "not configured (set ARS_NEO4J_URI)"
        if self.settings.embedder != "off":
            emb = self.memory.embeddings.run(max_seconds=max_seconds)
            report.embeddings = emb
            if not emb.ok:
                report.ok = False
                report.error = "; ".join(e for e in (report.error, f"embeddings: {emb.error}") if e)
        return report

    def embed_new(self, max_seconds: float = 60.0):
        """Embed the episodes written since the last run (a loop's own, after it ran), unless
        embedding is off or another process is at it (then None): what ``ars sync run`` does
        for embeddings, without waiting for it."""
        if self.settings.embedder == "off":
            return None
        report = self.memory.embeddings.run(max_seconds=max_seconds, wait=False)
        return None if report.busy else report

    def backfill(self, clear: bool = False) -> SyncReport:
        if self.memory.neo4j is None:
            raise BadInput("neo4j is not configured: set ARS_NEO4J_URI (see README, Neo4j)")
        report = self.memory.sync.backfill(clear=clear)
        if clear and report.ok and self.settings.embedder != "off":
            self.memory.embeddings.reset_neo4j()  # the vectors went with the graph: copy them again
            report.embeddings = self.memory.embeddings.run()
        return report

    def rename_host(self, new_host: str) -> dict[str, Any]:
        """Give this state directory a new host id and claim it (core/team/claim.py);
        the next sync pushes its whole ledger under it. HostClaimed (BadInput) when
        another state directory holds that id."""
        done = self.memory.sync.rename(new_host)
        if self.memory.neo4j is not None and self.settings.embedder != "off":
            self.memory.embeddings.reset_neo4j()  # the vectors go to the new id's episodes too
        return done

    def enrich_pending(self, limit: int | None = None) -> tuple[int, int]:
        """Ask the configured model again for episodes marked pending; returns
        (upgraded, still pending). Upgrades go through the ledger like any write."""
        if not self.settings.openai_base_url and not self.settings.openai_api_key:
            raise BadInput("no model configured: set ARS_OPENAI_BASE_URL (and OPENAI_API_KEY if it needs one)")
        from core.enrich.llm import enrich_pending

        result = enrich_pending(self.memory, self.settings, store=self.memory.store, limit=limit)
        self.memory.sync_neo4j(retries=0)
        return result

    def rebuild(self) -> int:
        """Recreate memory.sqlite from the ledger; the lines it had to skip
        are in ``ledger_problems()``."""
        path = self.memory.ledger.path
        if not path.exists():
            raise BadInput(f"no ledger at {path}: nothing to rebuild from")
        if not path.is_file():
            raise BadInput(f"{path} is not a file: move it aside and restore the ledger from a backup; "
                           "memory.sqlite was left as it is")
        return self.memory.rebuild_sqlite()

    def ledger_problems(self) -> list[str]:
        """Ledger lines the last apply skipped, as ``ledger.jsonl:LINE: what is wrong``."""
        return [p.describe(self.memory.ledger.path) for p in self.memory.ledger_problems]

    # -- health ------------------------------------------------------------------
    def doctor(self) -> dict[str, Any]:
        tiers: list[TierReport] = self.memory.health()
        return {
            "state_dir": str(self.state_dir.resolve()),
            "team": {"namespace": self.identity.namespace, "host": self.identity.host,
                     "agent": self.identity.agent or None},
            "sync": self.sync_status(),
            "tiers": [t.model_dump(include={"tier", "status", "latency_ms", "error"}) for t in tiers],
            "config": self.settings.public(),
        }

    def health(self) -> dict[str, Any]:
        """What ``ars doctor`` reports (each tier's status and latency, the sync
        counts, backlog and drift, the ledger's lines), plus the Neo4j breaker's
        state and the ledger file's size and last write, for a live view. Read
        only. A number core does not have is absent, not made up: the dashboard
        says so, and shows any key a later core adds."""
        from dataclasses import asdict
        from datetime import datetime, timezone

        report = self.doctor()
        report["config"] = {}  # the settings are `ars doctor`'s business, not a live number
        store = self.memory.neo4j  # None when ARS_NEO4J_URI is unset
        report["breaker"] = asdict(store.breaker.snapshot()) if store is not None else None
        embeddings = (report.get("sync") or {}).get("embeddings") or {}
        if embeddings.get("embedder", "off") != "off" and embeddings.get("not_embedded") is not None:
            report["embedding_backlog"] = embeddings["not_embedded"]  # episodes `ars sync run` has yet to embed
        path = self.memory.ledger.path
        try:
            st = path.stat()
        except FileNotFoundError:
            report["ledger_file"] = {"path": str(path), "bytes": 0, "last_fsync": None}
        else:
            # every append fsyncs before it returns, so the file's last change is its last fsync
            report["ledger_file"] = {"path": str(path), "bytes": st.st_size,
                                     "last_fsync": datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat()}
        return report

    # -- loops ---------------------------------------------------------------------
    # The autonomous loop (core/loop): start and run, supervise (approve, reject,
    # edit, respond, cancel), replay, fork, first-principles check, rehydrate.
    # Errors a person must fix are BadInput; LoopBusy and CorruptCheckpoint are
    # failures (another process runs the loop; a checkpoint cannot be read).
    @property
    def loops(self):
        """The loop engine of this state directory (created on first use)."""
        from core.loop.engine import Engine

        if getattr(self, "_loops", None) is None:
            self._loops = Engine(self.state_dir, self.memory, self.settings)
            self._loops.supervisor_pin = self.supervisor_pin
        return self._loops

    def load_goal(self, goal: "str | Path | dict[str, Any]") -> "GoalFrame":
        """A GoalFrame from a goal file path, a dict, or plain goal text (``str``)."""
        from core.loop.goals import load_goal

        return load_goal(goal)

    def loop_start(self, goal: "str | Path | dict[str, Any] | GoalFrame", policy: str = "offline",
                   run: bool = True) -> "LoopState":
        """Create a loop for ``goal`` and (by default) run it to its first exit."""
        from core.loop.models import GoalFrame

        frame = goal if isinstance(goal, GoalFrame) else self.load_goal(goal)
        state = self.loops.create(frame, policy)
        return self.loops.run(state.loop_id) if run else state

    def loop_resume(self, loop_id: str) -> "LoopState":
        """Continue a loop from its checkpoint (after a crash, or once a decision is recorded)."""
        return self.loops.run(loop_id)

    def loop_list(self, bases: "list[str] | None" = None) -> "tuple[list[LoopState], list[str]]":
        """Every loop's latest state (newest first) and one line per unreadable checkpoint;
        only the loops of ``bases`` (from ``loop_bases``) when given."""
        listing = self.loops.store.list(bases)
        return listing.states, [f"{p.file}: {p.error}" for p in listing.problems]

    def loop_bases(self) -> "list[str]":
        """Every loop's checkpoint file base, the most recently written first, without reading
        one: to list the loops a person sees first, then the rest (``loop_list(bases)``)."""
        return self.loops.store.bases()

    def loop_show(self, loop_id: str) -> "LoopState":
        loaded = self.loops.store.load(loop_id)
        self.loops.warnings.extend(loaded.warnings)
        return loaded.state

    def loop_decide(self, loop_id: str, kind: str, *, note: str = "", args: "dict[str, Any] | None" = None,
                    request_id: str | None = None, resume: bool = True, signer: Any = None) -> "LoopState":
        """Record a person's decision (exactly once per request) and resume the loop.
        With a supervisor key set up, the decision must be signed (``signer``)."""
        from core.loop.decisions import decide

        self._require_signer(signer)
        decide(self.state_dir, loop_id, kind, note=note, args=args, request_id=request_id,
               tools=self.loops.tools, store=self.loops.store, signer=signer)
        return self.loops.run(loop_id) if resume else self.loop_show(loop_id)

    def loop_approve(self, loop_id: str, note: str = "", request_id: str | None = None,
                     resume: bool = True, signer: Any = None) -> "LoopState":
        return self.loop_decide(loop_id, "approve", note=note, request_id=request_id, resume=resume, signer=signer)

    def loop_reject(self, loop_id: str, reason: str, request_id: str | None = None,
                    resume: bool = True, signer: Any = None) -> "LoopState":
        return self.loop_decide(loop_id, "reject", note=reason, request_id=request_id, resume=resume, signer=signer)

    def loop_respond(self, loop_id: str, text: str, request_id: str | None = None,
                     resume: bool = True, signer: Any = None) -> "LoopState":
        return self.loop_decide(loop_id, "respond", note=text, request_id=request_id, resume=resume, signer=signer)

    def loop_edit(self, loop_id: str, args: "dict[str, Any]", note: str = "", request_id: str | None = None,
                  resume: bool = True, signer: Any = None) -> "LoopState":
        """Approve the proposed action with new arguments."""
        return self.loop_decide(loop_id, "edit", note=note, args=args, request_id=request_id, resume=resume,
                                signer=signer)

    # -- the supervisor's key (core/inbox/signing.py) ---------------------------------------
    # The key a front end pinned when it started (the dashboard): the loop engines it
    # runs act only on decisions that key signed. None: the state directory's key, if any.
    supervisor_pin: str | None = None

    def supervisor_fingerprint(self) -> str | None:
        """The fingerprint of the supervisor key in this state directory, or None before
        ``ars supervisor init``. What a verifier trusts is the pinned one, not this."""
        from core.inbox.signing import public_fingerprint

        return public_fingerprint(self.state_dir)

    def supervisor_init(self, passphrase: bytes, old_passphrase: bytes | None = None) -> str:
        """Create (or, with the current passphrase, replace) the supervisor's key; its fingerprint."""
        from core.inbox.signing import init

        from core.ledger.ledger import Event, Ledger, content_id

        fp = init(self.state_dir, passphrase, old_passphrase=old_passphrase)
        Ledger(self.state_dir).append([Event(content_id("supervisor.key", fp), "supervisor.key",
                                             {"fingerprint": fp})])
        return fp

    def supervisor_unlock(self, passphrase: bytes) -> Any:
        """The supervisor's key unlocked in this process's memory (a ``signing.Signer``)."""
        from core.inbox.signing import unlock

        return unlock(self.state_dir, passphrase)

    def _require_signer(self, signer: Any) -> None:
        from core.inbox.signing import has_key
        from core.inbox.store import SignatureRequired

        if signer is None and has_key(self.state_dir):
            raise SignatureRequired(
                f"decisions here are signed with the supervisor's key ({self.supervisor_fingerprint()}): "
                "run the command on your terminal (it asks for the passphrase) or pass --passphrase-fd N")

    def loop_cancel(self, loop_id: str, reason: str = "cancelled by a person") -> "LoopState":
        return self.loops.cancel(loop_id, reason)

    def loop_history(self, loop_id: str) -> "list[HistoryEntry]":
        """The loop's history entries (what replay steps through), oldest first."""
        entries, _ = self.loops.store.history(loop_id)
        return entries

    def loop_search(self, text: str, limit: int = 100,
                    stop: "Callable[[], bool] | None" = None) -> list[dict[str, Any]]:
        """Loops whose history holds every word of ``text`` (case-insensitive):
        premises, hypotheses, outputs, reasons, decisions. One hit per loop, at
        the first entry that holds them (where it came in), as ``{loop_id,
        goal_id, index, status, field, snippet}``; at most ``limit`` loops. Reads
        the history files as bytes and parses only the lines that match, so
        100,000 entries take seconds, not minutes; ``stop()`` ends it early."""
        import json as _json

        from core.loop.checkpoints import CHECKPOINTS

        words = [w.casefold() for w in text.split()][:8]
        if not words:
            raise BadInput("say what to look for in the loops' histories")
        needles = [w.encode() for w in words]
        out: list[dict[str, Any]] = []
        folder = self.state_dir / CHECKPOINTS
        try:
            files = sorted(folder.glob("*.history.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        except FileNotFoundError:
            return []
        for path in files:
            if len(out) >= limit or (stop is not None and stop()):
                break
            try:
                data = path.read_bytes()
            except OSError:
                continue
            low = data.lower()
            if not all(n in low for n in needles):
                continue
            start = 0
            for line in low.split(b"\n"):
                end = start + len(line) + 1
                if line and all(n in line for n in needles):
                    try:
                        entry = _json.loads(data[start:end])
                    except ValueError:
                        start = end
                        continue
                    where, snippet = _find_words(entry, words)
                    if where:
                        st = entry.get("state") or {}
                        out.append({"loop_id": st.get("loop_id", ""), "goal_id": st.get("goal_id", ""),
                                    "index": entry.get("index"), "status": entry.get("to_status", ""),
                                    "field": where, "snippet": snippet})
                        break
                start = end
        return out

    def loop_entry(self, loop_id: str, index: int) -> "HistoryEntry":
        entries = self.loop_history(loop_id)
        for e in entries:
            if e.index == index:
                return e
        have = f"{entries[0].index}..{entries[-1].index}" if entries else "none"
        raise BadInput(f"loop {loop_id} has no history entry {index} (entries {have}; "
                       "retention may have dropped it)")

    def loop_fork(self, loop_id: str, at: int, run: bool = False) -> "LoopState":
        """A new loop from history entry ``at`` (parent recorded); the original is untouched."""
        state = self.loops.fork(loop_id, at)
        return self.loops.run(state.loop_id) if run else state

    @staticmethod
    def check(text: str) -> "CheckResult":
        """First-principles verdicts (SOUL.md) on reasoning text, with evidence."""
        from core.loop.checker import check_text

        if not isinstance(text, str) or not text.strip():
            raise BadInput("nothing to check: give the reasoning as an argument or on stdin (ars check -)")
        return check_text(text)

    def rehydrate(self, write: bool = True) -> "RehydrateReport":
        """Open loops, their next steps and memories, sync health, a next focus;
        also written to ``<state>/startup-context.md`` unless ``write`` is false."""
        from core.loop.rehydrate import rehydrate

        return rehydrate(self.state_dir, self.memory, self.loops.store, write=write)

    # -- inbox -----------------------------------------------------------------------
    # Every request for a person in one place (core/inbox): agents' requests
    # (MCP request_approval, Claude Code tool calls held by the gate) and each
    # loop's open request or blocker (id "loop:<loop>:<request>"), each decided
    # exactly once. AlreadyDecided and UnknownRequest are BadInput.
    MAX_REMEMBER = 100_000  # characters of text one remember() takes

    @property
    def inbox(self) -> "Inbox":
        """The inbox of this state directory (agents' requests)."""
        from core.inbox import Inbox

        if getattr(self, "_inbox", None) is None:
            self._inbox = Inbox(self.state_dir)
        return self._inbox

    def inbox_list(self, status: str | None = None, *, every: bool = False,
                   since: "datetime | None" = None) -> "list[InboxRequest]":
        """Agents' requests and every loop's open request or blocker, newest first;
        ``every``: loops' decided requests too (the audit); ``since``: made or decided then or later."""
        from core.inbox.audit import loop_decided, since_filter
        from core.inbox.loops import from_pending

        items = list(self.inbox.list(status))
        states: list = []
        if status in (None, "pending") or every:
            states, problems = self.loop_list()
            self.inbox.problems.extend(problems)
        if status in (None, "pending"):
            items.extend(r for r in (from_pending(s) for s in states) if r is not None)
        if every:
            items.extend(r for r in loop_decided(self.loops.store, states) if status in (None, r.status))
        items = since_filter(items, since)
        items.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return items

    @staticmethod
    def inbox_request_of(state: "LoopState") -> "InboxRequest | None":
        """A loop's open request as the inbox shows it (no I/O), or None."""
        from core.inbox.loops import from_pending

        return from_pending(state)

    @staticmethod
    def inbox_context(request: "InboxRequest", state: "LoopState | None" = None, turns: int = 6) -> list[str]:
        """What the agent did before asking, one line each (core/inbox/context.py): a loop's
        last steps, or the last turns of the transcript its request names."""
        from core.inbox.context import loop_steps, request_context

        return loop_steps(state, turns) if state is not None else request_context(request.meta, turns)

    def inbox_get(self, request_id: str) -> "InboxRequest":
        """One request (an agent's, or ``loop:<loop>:<request>``) with its decision, if any."""
        from core.inbox.loops import decided, from_pending, is_loop_id, split_id

        if not is_loop_id(request_id):
            return self.inbox.get(request_id)
        from core.inbox import UnknownRequest
        from core.loop.checkpoints import LoopNotFound
        from core.loop.decisions import CorruptDecision, read_decision

        loop_id, req_id = split_id(request_id)
        try:
            state = self.loop_show(loop_id)
        except LoopNotFound:
            raise UnknownRequest(f"no inbox request {request_id!r}: there is no loop {loop_id!r} "
                                 "(`ars inbox list` shows the open requests)") from None
        pending = from_pending(state)
        try:
            d = read_decision(self.state_dir, loop_id, req_id)
        except CorruptDecision:  # settled by the next decision (core/loop/decisions.py): open until then
            d = None
        if d is not None:
            return decided(state, req_id, d, pending if pending is not None and pending.id == request_id else None)
        if pending is not None and pending.id == request_id:
            return pending
        raise UnknownRequest(f"loop {loop_id} has no request {req_id!r}"
                             + (f"; its open request is {pending.id}" if pending else " open")
                             + " (`ars inbox list` shows the open requests)")

    def inbox_decide(self, request_id: str, verdict: str, note: str = "", signer: Any = None) -> "InboxRequest":
        """Decide a request exactly once. A loop's goes through ``loop_decide`` (the
        loop resumes, as with ``ars loop approve``); an agent's through ``Inbox.decide``.
        With a supervisor key set up, only a signed decision (``signer``) is taken."""
        from core.inbox.loops import decided, is_loop_id, split_id

        if not is_loop_id(request_id):
            if signer is None and self.inbox.get(request_id).status == "pending":
                self._require_signer(signer)  # one that is not pending says who decided, or that it ended
            return self.inbox.decide(request_id, verdict, note, signer=signer)
        from core.loop.decisions import describe, read_decision
        from core.infra.once import AlreadyDecided

        if verdict not in ("approve", "reject", "respond", "edit"):
            raise BadInput(f"unknown verdict {verdict!r}: approve, reject or respond")
        if verdict == "edit":
            loop_id, _ = split_id(request_id)
            raise BadInput(f"edit a loop's proposed action with `ars loop edit {loop_id} --args JSON`")
        before = self.inbox_get(request_id)  # UnknownRequest, or its decision already
        loop_id, req_id = split_id(request_id)
        if before.decision is not None:
            d = read_decision(self.state_dir, loop_id, req_id)
            raise AlreadyDecided(f"{describe(d) if d else f'request {req_id} of loop {loop_id} was already decided'}; "
                                 "a second decision is refused")
        state = self.loop_decide(loop_id, verdict, note=note, request_id=req_id, signer=signer)
        d = read_decision(self.state_dir, loop_id, req_id)
        if d is None:  # not expected: the claim wrote it before the loop resumed
            raise RuntimeError(f"{request_id}: the decision was recorded but cannot be read back")
        return decided(state, req_id, d, before if before.status == "pending" else None)

    def request_approval(self, source: str, action: str, details: str = "", risk: str = "medium",
                         kind: str = "approval", meta: "dict[str, Any] | None" = None, binds: str = "",
                         expires_in: float | None = None, exact: str | None = None) -> "InboxRequest":
        """A new pending request from an agent (durable when this returns). ``binds``: what a
        signed decision is bound to (a tool's name; default the source's kind); ``expires_in``
        seconds: when nobody waits for it any more; ``exact``: the whole input when ``details``
        was cut to fit (a decision signs its hash; the stored detail is also redacted)."""
        return self.inbox.create(source=source, kind=kind, summary=action, detail=details, risk=risk, meta=meta,
                                 binds=binds, expires_in=expires_in, exact=exact)

    def inbox_end(self, request_id: str, how: str, why: str = "") -> bool:
        """End a request nobody waits for any more (``expire`` or ``withdraw``), exactly
        once; False when it was already decided or ended."""
        return self.inbox.end(request_id, how, why)

    def inbox_withdraw(self, request_id: str, why: str = "") -> bool:
        """The waiter went away (a client disconnected, the call ran, the session stopped)."""
        return self.inbox.end(request_id, "withdraw", why)

    def remember(self, text: str, summary: str | None = None, topics: Sequence[str] = (),
                 session_id: str | None = None, source: str = "manual") -> str:
        """Store ``text`` as an episode (ledger first, like any ingest); returns its id.
        The same text from the same source and session is the same episode."""
        import hashlib
        from datetime import datetime, timezone

        from pydantic import ValidationError

        from core.errors import first_error
        from core.models import Episode

        if not isinstance(text, str) or not text.strip():
            raise BadInput("nothing to remember: give the text to store")
        if len(text) > self.MAX_REMEMBER:
            raise BadInput(f"text is {len(text):,} characters, over the {self.MAX_REMEMBER:,} limit of one "
                           "memory: store a summary, or split it")
        if summary is not None and (not isinstance(summary, str) or len(summary) > 4_000):
            raise BadInput("summary must be text of at most 4,000 characters")
        if isinstance(topics, str):
            topics = [topics]
        topics = [t.strip() for t in topics if isinstance(t, str) and t.strip()]
        if len(topics) > 100 or any(len(t) > 200 for t in topics):
            raise BadInput("topics: at most 100, each at most 200 characters")
        session = (session_id or "").strip()
        if len(session) > 500:
            raise BadInput("session_id is over 500 characters")
        # secrets never enter memory: the text, summary and topics are stored redacted,
        # and the id is of the redacted text (the same memory, whatever secret it held)
        from core.govern.redact import redact_episode, redact_text

        text = redact_text(text)
        h = hashlib.blake2b(digest_size=10)
        for part in (source, session, text):
            h.update(str(part).encode("utf-8", "surrogatepass"))
            h.update(b"\x1f")
        now = datetime.now(timezone.utc)
        try:
            ep = Episode(id=f"{source}:{h.hexdigest()}", source=source, session_id=session,  # type: ignore[arg-type]
                         summary=" ".join((summary or "").split()) or " ".join(text.split())[:200],
                         text=text, topics=topics, first_ts=now, last_ts=now, message_count=1,
                         meta={"remembered": True})
        except ValidationError as exc:
            raise BadInput(f"cannot remember it: {first_error(exc)}") from None
        self.memory.store([redact_episode(ep)])
        return ep.id

    # -- dashboard -------------------------------------------------------------------
    # What the Textual dashboard (tui/app.py) needs beyond the calls above: which
    # loops a changed file belongs to (so it reloads only those), several loops at
    # once, whether a loop runs right now, and how much memory there is. The demo
    # seeding is core/demo.py.
    def loop_ids_for_paths(self, paths: Iterable[str | Path]) -> tuple[set[str], bool]:
        """The loop ids whose checkpoint, history or decision files are among
        ``paths``; the flag is true when a name could not be mapped back to its
        loop (a shortened name), so the caller should list every loop again."""
        from urllib.parse import unquote

        checkpoints = (self.state_dir / "checkpoints").resolve()
        approvals = (self.state_dir / "approvals").resolve()
        ids: set[str] = set()
        rescan = False
        for raw in paths:
            p = Path(raw)
            name = p.name
            if name.startswith(".") or name.endswith(".tmp"):
                continue
            parent = p.parent.resolve() if p.parent.exists() else p.parent
            if parent == checkpoints:
                if name.endswith(".history.jsonl"):
                    base = name[: -len(".history.jsonl")]
                elif name.endswith(".json"):
                    base = name[: -len(".json")]
                else:
                    continue
                part = base.rsplit("__", 1)[-1]
            elif parent == approvals and name.endswith(".json"):
                part = name[: -len(".json")].split("__", 1)[0]
            else:
                continue
            if "~" in part or not part:
                rescan = True  # a name cut to its length limit: not reversible
                continue
            ids.add(unquote(part, errors="surrogatepass"))
        return ids, rescan

    def loop_states(self, loop_ids: Iterable[str]) -> "tuple[dict[str, LoopState], set[str], list[str]]":
        """The latest state of each loop; the ids that no longer exist; one line
        per checkpoint that cannot be read."""
        from core.loop.checkpoints import CorruptCheckpoint, LoopNotFound

        states: dict[str, LoopState] = {}
        gone: set[str] = set()
        problems: list[str] = []
        for loop_id in loop_ids:
            try:
                states[loop_id] = self.loops.store.load(loop_id).state
            except LoopNotFound:
                gone.add(loop_id)
            except CorruptCheckpoint as exc:
                problems.append(f"{exc.path.name}: {exc.error}")
            except OSError as exc:  # vanished between the listing and the read
                problems.append(f"{loop_id}: {' '.join(str(exc).split())[:160]}")
        return states, gone, problems

    def loop_running(self, loop_id: str) -> bool:
        """Whether some process (this one included) is running the loop now."""
        return self.loops.store.is_running(loop_id)

    def loop_run_alone(self, loop_id: str) -> "LoopState":
        """Run a loop to its next exit on an engine of its own, so a front end can
        run several loops at once from threads (one engine runs one loop at a time)."""
        from core.loop.engine import Engine

        engine = Engine(self.state_dir, self.memory, self.settings, tools=self.loops.tools,
                        store=self.loops.store)
        engine.supervisor_pin = self.supervisor_pin
        return engine.run(loop_id)

    # -- memory the supervisor governs (core/govern) ---------------------------------
    def forget_select(self, ids: Sequence[str] = (), *, session: str | None = None, source: str | None = None,
                      query: str | None = None) -> "Selection":
        """What ``forget`` would remove (listed before it goes); BadQuery when nothing."""
        from core.govern.forget import select

        return select(self.memory, ids=ids, session=session, source=source, query=query)

    def forget(self, selection: "Selection", why: str = "", signer: Any = None) -> "ForgetReport":
        """Forget ``selection`` from every file of this state directory before returning
        (Neo4j at the next sync, the team's hosts at their next pull). With a supervisor
        key it takes the supervisor's unlocked signer: forgetting is their decision."""
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

    def episode_count(self) -> int | None:
        """Episodes in the SQLite store (None when it cannot be read): the
        dashboard's empty states say how much memory there is to search."""
        try:
            return self.memory.sqlite.count()
        except Exception:  # noqa: BLE001 - a broken store is shown as unknown
            return None

    # -- used by the CLI and the recall daemon --------------------------------------------------------
    def warm(self, deadline: float = 10.0, rounds: int = 12) -> None:
        """Pay a first recall's costs now (the Neo4j connection and its query plan,
        SQLite's statistics), each tier's deadline raised to at least ``deadline`` s:
        the recall daemon does this before it answers anyone. A Neo4j JVM just started
        answers a new query shape in hundreds of ms until it has compiled it, so the
        warm-up recall is repeated, at most ``rounds`` times, until Neo4j answers inside
        half its read deadline."""
        memory = self.memory
        saved = dict(memory.deadlines)
        memory.deadlines = {t: max(v, deadline) for t, v in saved.items()}
        try:
            if memory.neo4j is not None:
                memory.neo4j.warm()
            for _ in range(rounds):
                neo = self.recall("warm up", k=1).tier("neo4j")
                slow = neo is not None and neo.status in ("ok", "empty") \
                    and neo.latency_ms > saved.get("neo4j", 0.0) * 500  # half the read deadline
                if not slow:
                    break
        finally:
            memory.deadlines = saved

    def refresh(self) -> None:
        """Catch up with the state directory as a fresh process would on open: apply the
        ledger events SQLite has not applied yet (written by other processes); never waits."""
        try:
            self.memory.recover(wait=False)
        except Exception:  # noqa: BLE001 - as on open: a broken SQLite still leaves the other tiers
            pass

    def graph_troubled(self) -> bool:
        """Whether Neo4j's recent answers failed (its breaker is not closed)."""
        neo = self.memory.neo4j
        return neo is not None and neo.breaker.troubled()

    def warm_graph(self) -> None:
        """Plan Neo4j's search once, off any read path (a restarted Neo4j's cold JVM
        misses every read deadline until it has)."""
        if self.memory.neo4j is not None:
            self.memory.neo4j.warm()


def _find_words(value: Any, words: list[str], path: str = "") -> tuple[str, str]:
    """The first string inside ``value`` that holds every word: (its path, a snippet)."""
    if isinstance(value, str):
        low = value.casefold()
        if all(w in low for w in words):
            at = low.find(words[0])
            text = " ".join(value[max(0, at - 60): at + 140].split())
            return path or "-", text
        return "", ""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return "", ""
    for k, v in items:
        if k == "state" and path == "":
            continue  # the entry's own fields first; the state snapshot after
        found = _find_words(v, words, f"{path}.{k}" if path else str(k))
        if found[0]:
            return found
    if isinstance(value, dict) and path == "" and "state" in value:
        return _find_words(value["state"], words, "state")
    return "", ""


# -- used by the CLI and the recall daemon ------------------------------------------------------------
# What the front ends take from core (they import core.api, core.models and core.errors only), each
# name resolved on first use: `ars recall` loads none of these modules. name -> (module, attribute;
# None: the module itself).
_FOR_FRONT_ENDS: dict[str, tuple[str, str | None]] = {
    "config_error": ("core.config", "config_error"), "load_settings": ("core.config", "load_settings"),
    "FORMATS": ("core.ingest", "FORMATS"),
    "cue": ("core.memory.confidence", "cue"), "weak_result": ("core.memory.confidence", "weak_result"),
    "AlreadyDecided": ("core.inbox", "AlreadyDecided"), "CorruptRequest": ("core.inbox", "CorruptRequest"),
    "inbox_outcome": ("core.inbox.audit", "outcome"),
    "BadPassphrase": ("core.inbox.signing", "BadPassphrase"), "SigningError": ("core.inbox.signing", "SigningError"),
    "has_key": ("core.inbox.signing", "has_key"), "pin_problem": ("core.inbox.signing", "pin_problem"),
    "gate_policy": ("core.inbox.policy", None), "gate_rules": ("core.inbox.gate", None),
    "CorruptCheckpoint": ("core.loop.checkpoints", "CorruptCheckpoint"), "LoopBusy": ("core.loop.checkpoints", "LoopBusy"),
    "CorruptDecision": ("core.loop.decisions", "CorruptDecision"),
    "pending_problem": ("core.loop.decisions", "pending_problem"),
    "parse_json": ("core.loop.goals", "parse_json"), "render_markdown": ("core.loop.rehydrate", "render_markdown"),
    "seed_demo": ("core.demo", "seed"), "state_kind": ("core.demo", "state_kind"),
    "ForgetFailed": ("core.govern.forget", "ForgetFailed"),
    "atomic_write": ("core.infra.fsutil", "atomic_write"), "fsync_dir": ("core.infra.fsutil", "fsync_dir"),
    "private_dir": ("core.infra.fsutil", "private_dir"),
}


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _FOR_FRONT_ENDS:
        raise AttributeError(f"module 'core.api' has no attribute {name!r}")
    module, attr = _FOR_FRONT_ENDS[name]
    value = importlib.import_module(module)
    value = value if attr is None else getattr(value, attr)
    globals()[name] = value
    return value
