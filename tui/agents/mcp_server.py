"""``ars mcp``: ARS's memory, loops and inbox as MCP tools, on the official SDK.

One long-lived ``core.api.ARS`` serves every call, so the state directory
stays open and warm calls skip what a fresh ``ars recall`` process pays
(interpreter, imports, opening SQLite). Tools take typed arguments (the SDK
builds a pydantic model of each signature) and return pydantic models, so
clients get structured results; a bad argument or a failure comes back as an
MCP tool error carrying one line that names the problem and the fix, never as
a crash of the server.

Loaded only by ``ars mcp``: it must not import textual, the Neo4j driver
(unless ``ARS_NEO4J_URI`` is set: ``core`` loads it on first use) or openai.
"""

# No ``from __future__ import annotations``: the SDK reads the tools'
# annotations at registration, and string annotations of names local to
# ``build_server`` would not resolve.

import hmac
import json
import logging
import re
import shlex
import threading
from datetime import datetime
from typing import Annotated, Any, Literal

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from core.api import ARS, MAX_PAGE_CHARS, OPEN_STATUSES, PAGE_CHARS, STATUSES, EpisodeText
from core.errors import BadQuery, failure_line, first_error
from core.models import Explanation, LoopSummary, RecallResult
from tui.agents.file_watch import FileWatch
from tui.agents.mcp_catalog import server_version

log = logging.getLogger("ars.mcp")

MAX_K = 100  # recall/explain: more is a dump, not a recall
MAX_WAIT_S = 900.0  # request_approval: longer waits come back "pending"; check_approval picks them up
REQUEST_TTL_S = 3600.0  # a request nobody decided within an hour expires (check_approval says so)
# Blocking work runs in worker threads under limiters of the server's own, never the
# default one: answering (recall, explain, loops, ...) keeps its capacity whatever
# else is going on, and a request_approval that waits holds no thread at all
# (tui/agents/file_watch.py), only briefly one of the write tokens to create its
# request and read the decision back.
ANSWER_THREADS = 16
WRITE_THREADS = 4
STARTUP_URI = "ars://startup-context"

INSTRUCTIONS = """\
ARS is this user's memory of past agent sessions and the supervisor of risky steps.
- Call `recall` before answering anything about past work, decisions, people or
  incidents; `get` for the whole of a memory a snippet cut short; `explain` when an
  expected memory is missing.
- Call `remember` after a decision or finding worth keeping (one paragraph).
- Call `request_approval` before a risky or irreversible step (deleting data,
  force-pushing, production changes, spending money) and act only on "approved".
- Read `startup_context` (or the ars://startup-context resource) when a session
  starts: open loops, what they wait for, and memory health."""


# -- results ----------------------------------------------------------------------------
class Remembered(BaseModel):
    """What ``remember`` stored."""

    episode_id: str = Field(description="the new episode's id: recall finds it from now on")


class ForgetRequested(BaseModel):
    """A forget asked of the supervisor (it forgets nothing by itself)."""

    request_id: str = Field(description="the inbox request the supervisor decides")
    note: str = Field(description="what happens next")


def request_forget_record(ars: Any, target: str, why: str, *, query: bool = False, source: str = "mcp") -> Any:
    """An inbox request asking the supervisor to forget ``target`` (an episode id, or
    the words of a query). An agent cannot forget: erasing the record of what it did is
    the supervisor's decision, made by running the command the request shows."""
    target = (target or "").strip()
    if not target:
        raise ValueError("give an episode_id or a query: what should be forgotten")
    # shell-quoted: the supervisor pastes this into a shell, and the agent chose every word of it
    cmd = f"ars forget --query {shlex.quote(target)}" if query else f"ars forget {shlex.quote(target)}"
    detail = f"{cmd} --why {shlex.quote(why or 'asked by an agent')}"
    return ars.request_approval(source=source, action=f"forget {'memories matching ' if query else ''}{target[:80]}",
                                details=detail, risk="medium", kind="approval",
                                meta={"forget": {"query" if query else "episode_id": target, "why": why}},
                                binds="forget")


class ApprovalStatus(BaseModel):
    """Where an approval request stands."""

    request_id: str = Field(description="pass it to check_approval to ask again later")
    status: Literal["approved", "rejected", "answered", "pending", "expired", "withdrawn", "unverified"] = Field(
        description="approved: go ahead; rejected: do not (note says why); answered: the person replied "
                    "instead of approving (note holds the reply; not an approval); pending: no decision yet; "
                    "unverified: marked approved, but not signed by the supervisor's key: do not act; "
                    "expired or withdrawn: nobody decided and nobody will (note says why): do not act, "
                    "ask again with request_approval if it is still needed")
    note: str = Field("", description="the approval note, the rejection reason or the reply")
    decided_by: str = Field("", description="who decided (user@host:pid)")
    decided_at: datetime | None = Field(None, description="when it was decided (UTC)")


class LoopsResult(BaseModel):
    loops: list[LoopSummary] = Field(description="newest first")
    problems: list[str] = Field(default_factory=list, description="checkpoints that could not be read")


# -- arguments --------------------------------------------------------------------------
Query = Annotated[str, Field(description="what to look for: words from the topic, names, errors, "
                                          "file or command names (English, Chinese or both)")]
K = Annotated[int, Field(description=f"how many memories to return, 1-{MAX_K}")]
Tiers = Annotated[list[Literal["neo4j", "sqlite", "files"]] | None,
                  Field(description="only these tiers (default: the index tiers, files as fallback)")]
Scope = Annotated[str | None, Field(description="only memories of these agents or hosts of this team's "
                                                 "namespace: agent=NAME,host=NAME (a key may repeat); "
                                                 "leave it out to search the whole namespace")]
EpisodeId = Annotated[str, Field(description="the episode id, as recall returns it (hits[].episode_id)")]
Risk = Annotated[Literal["low", "medium", "high"], Field(description="how bad it is if this goes wrong")]
LoopStatus = Annotated[Literal[("open", *STATUSES)] | None,  # type: ignore[valid-type]
                       Field(description="only loops in this status; open = active, blocked or waiting_human")]


# -- errors -----------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _tool_error(exc: BaseException) -> ToolError:
    """The one line a client sees for ``exc``: what is wrong and what to do."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, BadQuery):
        return ToolError(_one_line(str(exc)))
    if isinstance(exc, ValidationError):
        return ToolError(first_error(exc, more=True))
    log.warning("ARS call failed", exc_info=exc)
    return ToolError(failure_line(exc)[1])


def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - every failure is the client's one-line tool error
        raise _tool_error(exc) from exc


def _check_k(k: int) -> None:
    if not 1 <= k <= MAX_K:
        raise ToolError(f"k must be between 1 and {MAX_K} (how many memories to return), got {k}")


def client_name(ctx: Context | None) -> str:
    """The client's own name (from its initialize / request envelope), made safe for a source id."""
    name = ""
    try:
        params = ctx.session.client_params if ctx is not None else None
        name = params.client_info.name if params is not None and params.client_info else ""
    except Exception:  # noqa: BLE001 - outside a request, or a client that did not say
        name = ""
    name = re.sub(r"[^\w.@+-]+", "-", str(name)).strip("-")[:60]
    return name or "unknown"


def approval_status(req: Any, pin: str | None = None) -> ApprovalStatus:
    """Where ``req`` stands for the agent. An approval counts only when the supervisor's
    pinned key signed it for this request and these details; else it reads "unverified"."""
    d = req.decision
    status = req.status if req.status in ("approved", "rejected", "answered", "expired", "withdrawn") else "pending"
    note = d.note if d else ""
    if status == "approved" and d is not None:
        from core.api import SETUP_HINT, verify_decision

        why = f"no supervisor key is pinned in this server ({SETUP_HINT})" if pin is None else \
            verify_decision(d.model_dump(mode="json"), pin=pin, request_id=req.id, input_hash=req.exact_hash(),
                            now=d.decided_at)[1]
        if why:
            status, note = "unverified", f"not an approval you may act on: {why}"
    return ApprovalStatus(request_id=req.id, status=status, note=note,
                          decided_by=d.decided_by if d else "", decided_at=d.decided_at if d else None)


# -- auth ------------------------------------------------------------------------------
class StaticTokenVerifier:
    """The SDK's TokenVerifier for one shared bearer token (``ars mcp --http``)."""

    def __init__(self, token: str):
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="", client_id="ars-mcp-bearer", scopes=[])
        return None


# -- the server -------------------------------------------------------------------------
class ArsMCPServer(MCPServer):
    def __init__(self, ars: ARS, **kwargs: Any):
        super().__init__(**kwargs)
        self.ars = ars
        self.watch = FileWatch()  # request_approval's waiting calls

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None):
        """Arguments that fail the tool's schema come back as one line (the SDK's
        error is pydantic's report, many lines long)."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: "
                                f"{first_error(exc.__cause__, more=True)}") from exc.__cause__
            raise


def build_server(ars: ARS, *, token: str | None = None, issuer_url: str = "http://127.0.0.1") -> ArsMCPServer:
    """The MCP server over ``ars`` (kept open by the caller). ``token``: a bearer
    token every HTTP request must carry (stdio needs none)."""
    auth: dict[str, Any] = {}
    if token:
        auth = dict(token_verifier=StaticTokenVerifier(token),
                    auth=AuthSettings(issuer_url=issuer_url, resource_server_url=None))
    server = ArsMCPServer(ars, name="ars", title="ARS memory and approvals", instructions=INSTRUCTIONS,
                          version=server_version(), log_level="WARNING", **auth)
    writes = threading.Lock()  # one write at a time from this process (the state dir's lock spans processes)
    answers = anyio.CapacityLimiter(ANSWER_THREADS)
    write_slots = anyio.CapacityLimiter(WRITE_THREADS)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def answer(fn, *args, **kwargs):
        """``fn`` in a worker thread of the answering tools' own."""
        return await anyio.to_thread.run_sync(lambda: _call(fn, *args, **kwargs), limiter=answers)

    async def write(fn, *args, **kwargs):
        def locked():
            with writes:
                return _call(fn, *args, **kwargs)

        return await anyio.to_thread.run_sync(locked, limiter=write_slots)

    @server.tool(annotations=read_only, structured_output=True)
    async def recall(query: Query, k: K = 10, tiers: Tiers = None, scope: Scope = None) -> RecallResult:
        """Search the user's memory of past agent sessions (ARS). Call it before answering anything
        about past work, decisions, people, incidents or "what did we do about X", and before
        redoing work that may have been done. Returns ranked hits with snippets, each with
        per-tier scores (`breakdown`), every tier's status, and `degraded` when a tier failed
        (then say the answer may be incomplete)."""
        _check_k(k)
        return await answer(ars.recall, query, k=k, tiers=tiers, scope=scope)

    @server.tool(annotations=read_only, structured_output=True)
    async def explain(query: Query, episode_id: EpisodeId, k: K = 10) -> Explanation:
        """Why `recall(query)` did or did not return one episode: per tier, whether it is stored,
        which query words it matched or misses, its rank, and one verdict. Call it when a memory
        you expected is missing, to pick better query words instead of guessing."""
        _check_k(k)
        if not episode_id.strip():
            raise ToolError("episode_id is empty: pass an id recall returned (hits[].episode_id)")
        ex = await answer(ars.explain, query, episode_id, k=k)
        if not any(t.stored for t in ex.tiers) and any(t.stored is False for t in ex.tiers):
            raise ToolError(f"unknown episode {episode_id[:80]!r}: no tier stores it; "
                            "use an id recall returned (hits[].episode_id)")
        return ex

    @server.tool(annotations=read_only, structured_output=True)
    async def get(episode_id: EpisodeId,
                  offset: Annotated[int, Field(description="where to start in the text (a previous page's "
                                                           "next_offset); 0 for the start")] = 0,
                  limit: Annotated[int, Field(description=f"at most this many characters, 1-{MAX_PAGE_CHARS}")]
                  = PAGE_CHARS) -> EpisodeText:
        """One memory's whole text, with when it happened, the agent and the session: what a
        command printed, what was decided and by whom. Call it when a recall hit or the recalled
        context shows only a snippet of what you need. Long texts come a page at a time: call
        again with `offset` = `next_offset` until `next_offset` is null."""
        return await answer(ars.get, episode_id, offset=offset, limit=limit)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=False),
                 structured_output=True)
    async def remember(text: Annotated[str, Field(description="what to keep, in plain words: the decision or "
                                                              "finding, why, and what it applies to")],
                       summary: Annotated[str | None, Field(description="one line a person reads first")] = None,
                       topics: Annotated[list[str], Field(description="a few topic words")] = [],  # noqa: B006
                       session_id: Annotated[str | None, Field(description="this agent session's id, "
                                                                           "to group memories")] = None
                       ) -> Remembered:
        """Store a memory durably (ledger first, like any ingest) so later sessions can recall it.
        Call it after a decision, a finding, a fix or a user preference worth keeping; one
        paragraph per memory, not whole transcripts (those are ingested on their own)."""
        episode_id = await write(ars.remember, text, summary=summary, topics=tuple(topics or ()),
                                 session_id=session_id)
        return Remembered(episode_id=episode_id)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=True),
                 structured_output=True)
    async def request_approval(
        action: Annotated[str, Field(description="one line: what you are about to do")],
        details: Annotated[str, Field(description="exactly what will run: the command, the file, the query")] = "",
        risk: Risk = "medium",
        wait_s: Annotated[float, Field(description=f"how long to wait for the decision, 0-{MAX_WAIT_S:g} s; "
                                                   "pending after that (ask again with check_approval)")] = 120,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> ApprovalStatus:
        """Ask the user (the supervisor, in the ARS inbox) before a risky or irreversible step:
        deleting data, force-pushing, touching production, migrations, spending money, sending
        messages for the user. Waits up to `wait_s` for the decision. Act only on
        status "approved"; on "rejected" do not do it (the note says why); on "pending" do not
        act yet: do other work and call check_approval(request_id) later."""
        if not 0 <= wait_s <= MAX_WAIT_S:
            raise ToolError(f"wait_s must be between 0 and {MAX_WAIT_S:g} seconds, got {wait_s:g}: "
                            "wait less and ask again with check_approval")
        name = client_name(ctx)
        req = await write(ars.request_approval, source=f"mcp:{name}", action=action, details=details, risk=risk,
                          kind="approval", meta={"client": name}, binds="mcp", expires_in=REQUEST_TTL_S)
        try:
            # No thread while waiting: the request's outcome (a decision, or its ending)
            # appears whole as one file (core/inbox/store.py), so the wait is a stat now
            # and then; the request is read again only once that file is there.
            seen = await server.watch.wait(ars.inbox.decision_path(req.id), wait_s)
        except anyio.get_cancelled_exc_class():
            # the client cancelled the call or went away: nobody waits for a decision now,
            # so the request ends here and a late approval is refused
            with anyio.CancelScope(shield=True):
                try:
                    await write(ars.inbox_withdraw, req.id, f"the MCP client {name} cancelled the call or "
                                                            "disconnected")
                except ToolError as exc:  # the cancellation goes on; the request stays as it was
                    log.warning("could not withdraw %s: %s", req.id, exc)
            raise
        if seen:
            req = await anyio.to_thread.run_sync(lambda: _call(ars.inbox.get, req.id), limiter=write_slots)
        return approval_status(req, ars.supervisor_pin)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=False),
                 structured_output=True)
    async def request_forget(
        why: Annotated[str, Field(description="why this memory should go (a secret, a mistake, a user's wish)")],
        episode_id: Annotated[str | None, Field(description="the episode id recall returned")] = None,
        query: Annotated[str | None, Field(description="or: words of the memories to forget")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> ForgetRequested:
        """Ask the supervisor to forget a memory (it holds a secret, it is wrong, the user asked).
        You cannot forget anything yourself: this puts a request in the ARS inbox; the supervisor
        reads it and, if they agree, runs `ars forget`, which removes it everywhere."""
        if bool(episode_id) == bool(query):
            raise ToolError("give exactly one of episode_id or query")
        name = client_name(ctx)
        try:
            req = await write(request_forget_record, ars, episode_id or query or "", why, query=bool(query),
                              source=f"mcp:{name}")
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return ForgetRequested(request_id=req.id, note="waiting in the supervisor's inbox: if they agree they run "
                                                       f"`{req.detail}`; nothing is forgotten until then")

    @server.tool(annotations=read_only, structured_output=True)
    async def check_approval(request_id: Annotated[str, Field(description="the request_id request_approval "
                                                                          "returned (req-...)")]) -> ApprovalStatus:
        """Where an earlier request_approval stands now (approved, rejected, answered, still
        pending, or ended undecided: expired or withdrawn). Call it when request_approval came
        back "pending" before acting."""
        return approval_status(await answer(ars.inbox.get, request_id), ars.supervisor_pin)

    @server.tool(annotations=read_only, structured_output=True)
    async def loops(status: LoopStatus = None) -> LoopsResult:
        """ARS work loops and what each waits for: id, goal, status, step, iteration and the
        pending prompt a person must answer. Call it when asked what is in progress or blocked."""
        states, problems = await answer(ars.loop_list)
        kept = [s for s in states if status is None
                or (s.status in OPEN_STATUSES if status == "open" else s.status == status)]
        return LoopsResult(loops=[LoopSummary.of(s) for s in kept], problems=problems)

    def startup_markdown() -> str:
        from core.api import render_markdown

        return render_markdown(ars.rehydrate(write=False))

    async def startup_text() -> str:
        return await answer(startup_markdown)

    @server.tool(annotations=read_only)
    async def startup_context() -> str:
        """What to know when a session starts (the text `ars rehydrate` writes): open loops, their
        next steps and open requests, relevant memories, sync and tier health, a suggested next
        focus. Call it once at the start of a session."""
        return await startup_text()

    @server.resource(STARTUP_URI, name="startup-context", title="ARS startup context",
                     description="Open loops, next steps, relevant memories and memory health "
                                 "(what `ars rehydrate` writes)", mime_type="text/markdown")
    async def startup_resource() -> str:
        return await startup_text()

    return server
