"""The inbox on disk: ``<state>/inbox/<id>.json`` per request, ``<id>.decision.json`` per decision.

* A request file is written atomically (temp file, fsync, rename; 0600) after
  its ``inbox.request`` ledger event, so when ``create`` returns the request is
  durable and recorded.
* A decision is claimed exactly once by ``link(2)`` of a complete temp file to
  ``<id>.decision.json`` (``core.infra.once.create_once``, the mechanism loop decisions
  use): of several processes deciding at once one wins; the others get
  ``AlreadyDecided`` naming who decided what and when. The winner then appends
  an ``inbox.decision`` ledger event (stable id per request).
* The request file is never rewritten: its status is derived from whether the
  decision file exists, so ``wait`` only has to ``stat`` one name.
* Every request ends. One that nobody waits for any more is ended through the
  same exclusive claim as a decision (``end``: the hook gave up, the MCP client
  disconnected, the call ran or its session stopped), so a late decision loses
  the race and is told so ("nobody is waiting for req-...: it expired at ...").
  A request past its ``expires_at`` reads as expired even before anything
  claimed that (a waiter killed outright); deciding it records the ending.
* A decision a person makes while the state directory has a supervisor key is
  signed (``signer``): what the hook and the loop engine act on.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import first_error
from core.infra.fsutil import atomic_write, private_dir, read_regular
from core.ledger.ledger import Event, Ledger, content_id
from core.infra.once import AlreadyDecided, create_once, who
from core.errors import BadQuery
from core.inbox.models import ENDINGS, KINDS, RISKS, STATUS_OF, STATUSES, VERDICTS, InboxDecision, InboxRequest, now

INBOX = "inbox"
MAX_SUMMARY = 4_000  # characters
MAX_DETAIL = 16_000  # characters: what will run (a command, a tool's input)
MAX_META = 16_000  # characters of JSON
MAX_NOTE = 4_000
MAX_SOURCE = 200
MAX_FILE = 1 << 20  # bytes: a request or decision ARS writes is under 100 kB (the caps above, JSON-escaped)
ID_RE = re.compile(r"^req-[0-9a-f]{12}$")
ID_HINT = "ids look like req-<12 hex> or loop:<loop>:<request> (`ars inbox list` shows them)"


def new_request_id() -> str:
    """A fresh agent request id, ``req-<12 hex>``."""
    return f"req-{uuid.uuid4().hex[:12]}"


class UnknownRequest(BadQuery):
    """No such request."""


class NobodyWaiting(AlreadyDecided):
    """A decision on a request that expired or was withdrawn: nobody would act on it."""


class SignatureRequired(BadQuery):
    """The state directory has a supervisor key, and a decision was not signed with it."""


class RequestChanged(BadQuery):
    """The request file no longer says what the deciding person was shown."""


def _same_as_shown(now_on_disk: InboxRequest, shown: InboxRequest) -> None:
    if shown.id != now_on_disk.id or shown.exact_hash() != now_on_disk.exact_hash() \
            or shown.shown_hash() != now_on_disk.shown_hash():
        raise RequestChanged(f"{shown.id} changed on disk since it was shown to you (what runs or what it shows "
                             f"is different now): nothing was signed; read it again (ars inbox show {shown.id}) "
                             "and decide on what it says now")


class CorruptRequest(RuntimeError):
    """A request or decision file that cannot be read (damage: both are written whole)."""

    def __init__(self, path: Path, error: str):
        self.path = Path(path)
        self.error = error
        super().__init__(f"inbox file {INBOX}/{self.path.name} cannot be read ({error}); "
                         f"move it aside (mv {self.path} {self.path}.bad)")


# A file that does not parse is read again this many times, this far apart, before it is called
# damaged: ARS writes whole files (rename), but an agent rewriting its own request in place is
# caught mid-write (empty, half a JSON): not yet readable, not corrupt.
REREADS = 5
REREAD_PAUSE = 0.02  # seconds


def _read_model(path: Path, model):
    """A request or decision file as its model; ``CorruptRequest`` (one line)
    when it cannot be read or parsed, ``FileNotFoundError`` when it is absent."""
    for attempt in range(REREADS + 1):
        try:
            raw = read_regular(path, MAX_FILE)  # a planted symlink, FIFO or huge file is damage, never "decided"
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise CorruptRequest(path, exc.strerror or str(exc)) from None
        try:
            return model.model_validate_json(raw)
        except (ValidationError, ValueError) as exc:
            if attempt < REREADS:
                time.sleep(REREAD_PAUSE)
                continue
            what = "empty" if not raw.strip() else \
                first_error(exc) if isinstance(exc, ValidationError) else _one_line(str(exc))[:160]
            raise CorruptRequest(path, what) from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cap(what: str, text: str, limit: int) -> None:
    if len(text) > limit:
        raise BadQuery(f"{what} is {len(text):,} characters, over the {limit:,} limit: shorten it "
                       f"(put the rest in a file and name the file)")


# meta keys that hold free text quoted from the call (a gate's reasons quote the command);
# the others are ids, paths and names the hook and the dashboard look things up by
_TEXT_META = ("reasons", "action", "question", "context")


def _redact_meta(meta: dict, redact_value) -> dict:
    return {k: redact_value(v) if k in _TEXT_META else v for k, v in meta.items()}


class Inbox:
    def __init__(self, state_dir: Path):
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / INBOX
        self.problems: list[str] = []  # one line per file list() had to skip

    # -- paths ---------------------------------------------------------------------
    def _check_id(self, request_id: str) -> None:
        if not isinstance(request_id, str) or not ID_RE.match(request_id):
            raise UnknownRequest(f"no inbox request {str(request_id)[:80]!r}: {ID_HINT}")

    def request_path(self, request_id: str) -> Path:
        return self.dir / f"{request_id}.json"

    def decision_path(self, request_id: str) -> Path:
        return self.dir / f"{request_id}.decision.json"

    # -- create --------------------------------------------------------------------
    def create(self, *, source: str, kind: str, summary: str, detail: str = "", risk: str = "medium",
               meta: dict | None = None, binds: str = "", expires_in: float | None = None,
               exact: str | None = None, request_id: str | None = None) -> InboxRequest:
        """A new pending request; durable (ledger event, then its file) when this returns.
        ``request_id``: one from :func:`new_request_id` the caller recorded first (a hook's
        marker names its request before the request exists, so a hook killed in between
        still leaves something that ends it); refused if taken.
        ``binds`` names what a signed decision on it is bound to (a tool's name, "mcp");
        ``expires_in`` seconds: nobody waits for it after that. ``exact``: the whole input
        when ``detail`` had to be cut to fit (what a decision's hash is taken over)."""
        if not isinstance(source, str) or not source.strip():
            raise BadQuery("a request needs a source, e.g. mcp:<client> or claude-code:<session>")
        _cap("source", source, MAX_SOURCE)
        if kind not in KINDS:
            raise BadQuery(f"unknown request kind {kind!r}: use {', '.join(KINDS)}")
        if risk not in RISKS:
            raise BadQuery(f"unknown risk {risk!r}: use {', '.join(RISKS)}")
        if not isinstance(summary, str) or not summary.strip():
            raise BadQuery("a request needs a summary: one line saying what is asked")
        if not isinstance(detail, str):
            raise BadQuery("detail must be text: exactly what will run")
        _cap("summary", summary, MAX_SUMMARY)
        _cap("detail", detail, MAX_DETAIL)
        meta = dict(meta or {})
        try:
            meta_json = json.dumps(meta, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise BadQuery(f"meta must be a JSON object of plain values: {_one_line(str(exc))[:160]}") from None
        _cap("meta (as JSON)", meta_json, MAX_META)
        if expires_in is not None and not (isinstance(expires_in, (int, float)) and 0 < expires_in <= 30 * 86400):
            raise BadQuery(f"expires_in must be seconds above 0 and at most 30 days, not {expires_in!r}")
        created = now()
        expires = created + timedelta(seconds=float(expires_in)) if expires_in is not None else None
        binds = binds[:200]
        # What a decision signs is the hash of exactly what will run, taken here from the
        # input as given; what is stored and shown has its secrets redacted (the ledger is
        # memory). An agent that rewrites the stored hash only makes its own request
        # unverifiable: the hook checks a signature against the hash of the real input.
        from core.govern.redact import redact_text, redact_value
        from core.inbox.signing import input_hash

        if exact is not None and not isinstance(exact, str):
            raise BadQuery("exact must be text: the whole input that will run")
        signed_hash = input_hash(binds or source.strip().split(":", 1)[0], detail if exact is None else exact)
        if request_id is None:
            request_id = new_request_id()
        elif not (isinstance(request_id, str) and ID_RE.match(request_id)) or os.path.lexists(self.request_path(request_id)) \
                or os.path.lexists(self.decision_path(request_id)):  # a decision left behind must never meet a new request
            raise BadQuery(f"request id {str(request_id)[:80]!r} is malformed or taken: pass none, or one from new_request_id() "
                           "that no request or decision has")
        req = InboxRequest(id=request_id, source=source.strip(), kind=kind,  # type: ignore[arg-type]
                           summary=_one_line(redact_text(summary)), detail=redact_text(detail), risk=risk,  # type: ignore[arg-type]
                           meta=_redact_meta(meta, redact_value), created_at=created, binds=binds,
                           expires_at=expires, input_hash=signed_hash)
        body = req.model_dump(mode="json")
        Ledger(self.state_dir).append([Event(content_id("inbox.request", req.id), "inbox.request", body,
                                             ts=req.created_at.isoformat())])
        private_dir(self.dir)
        atomic_write(self.request_path(req.id), json.dumps(body, ensure_ascii=False, indent=1))
        from core.inbox.notify import announce

        announce(self.state_dir, req)  # a detached sender, when a URL is set: the caller never waits for it
        return req

    # -- read ----------------------------------------------------------------------
    def _read_request(self, path: Path) -> InboxRequest:
        return _read_model(path, InboxRequest)  # FileNotFoundError passes: no such request

    def read_decision(self, request_id: str) -> InboxDecision | None:
        try:
            return _read_model(self.decision_path(request_id), InboxDecision)
        except FileNotFoundError:
            return None

    def _with_decision(self, req: InboxRequest) -> InboxRequest:
        d = self.read_decision(req.id)
        if d is None:
            return req.model_copy(update={"status": "expired" if req.expired() else "pending", "decision": None})
        return req.model_copy(update={"status": STATUS_OF[d.verdict], "decision": d})

    def get(self, request_id: str) -> InboxRequest:
        """One agent request with its decision, if any; ``UnknownRequest`` if none."""
        self._check_id(request_id)
        try:
            req = self._read_request(self.request_path(request_id))
        except FileNotFoundError:
            raise UnknownRequest(f"no inbox request {request_id!r}: {ID_HINT}") from None
        return self._with_decision(req)

    def list(self, status: str | None = None) -> list[InboxRequest]:
        """Agent requests, newest first; only those with ``status`` when given."""
        if status is not None and status not in STATUSES:
            raise BadQuery(f"unknown status {status!r}: use {', '.join(STATUSES)}")
        self.problems = []
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        out: list[InboxRequest] = []
        for name in names:
            if not name.endswith(".json") or name.endswith(".decision.json") or \
                    not ID_RE.match(name[: -len(".json")]):
                continue
            try:
                req = self._with_decision(self._read_request(self.dir / name))
            except FileNotFoundError:
                continue
            except CorruptRequest as exc:
                self.problems.append(str(exc))
                continue
            if status is None or req.status == status:
                out.append(req)
        out.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return out

    # -- decide --------------------------------------------------------------------
    def decide(self, request_id: str, verdict: str, note: str = "", by: str = "", signer=None,
               shown: InboxRequest | None = None) -> InboxRequest:
        """Take the decision exactly once; ``AlreadyDecided`` (who, what, when) for a
        second one, ``NobodyWaiting`` when the request expired or was withdrawn.
        ``signer`` (an unlocked ``signing.Signer``) signs it; the caller decides
        whether an unsigned decision may be taken (``ARS.inbox_decide``).

        ``shown``: the request as the deciding person saw it (read before the passphrase
        prompt, the dashboard's dialog, the web page's card). A signature covers that copy's
        hashes, never a re-read of a file the agent can write while the person types; and
        when the file no longer matches it, nothing is signed (``RequestChanged``). A
        signed decision needs it."""
        if verdict not in VERDICTS:
            raise BadQuery(f"unknown verdict {verdict!r}: approve, reject or respond")
        if not isinstance(note, str):
            raise BadQuery("the note must be text")
        req = self.get(request_id)
        if req.decision is not None:
            raise (NobodyWaiting if req.decision.ended else AlreadyDecided)(
                f"{req.decision.describe(request_id)}; a second decision is refused"
                if not req.decision.ended else f"{req.decision.describe(request_id)}: the decision is refused")
        if req.status == "expired":
            self.end(request_id, "expire", "nobody was waiting any more", at=req.expires_at)
            return self.decide(request_id, verdict, note, by, signer, shown)  # reports the ending (or a racing decision)
        allowed = req.allowed()
        if verdict == "edit":
            raise BadQuery(f"request {request_id} is an agent's: it can be approved or rejected as it is, "
                           "not edited (reject it with a reason saying what to change)")
        if verdict not in allowed:
            raise BadQuery(f"cannot {verdict} {'an approval request' if req.kind == 'approval' else 'a ' + req.kind} "
                           f"(request {request_id}): use {' or '.join(allowed)}")
        if verdict == "reject" and not note.strip():
            raise BadQuery(f"a rejection needs a reason: ars inbox reject {request_id} --reason \"why not\"")
        if verdict == "respond" and not note.strip():
            raise BadQuery(f"a response needs text: ars inbox respond {request_id} \"your answer\"")
        _cap("the note", note, MAX_NOTE)
        at = now()
        fields: dict = {}
        by = by or who()
        if signer is not None and shown is None:
            raise BadQuery(f"a signed decision on {request_id} needs the request as it was shown to the person "
                           "(shown=...): sign what was shown, never a re-read")
        if shown is not None:
            _same_as_shown(req, shown)
        if signer is not None:
            fields = signer.sign_decision(request_id=request_id, input_hash=shown.exact_hash(), verdict=verdict,
                                          note=note.strip(), decided_at=at, shown_hash=shown.shown_hash())
            from core.inbox.signing import short

            by = f"supervisor {short(signer.fingerprint)} ({by})"
        d = InboxDecision(verdict=verdict, note=note.strip(), decided_by=by, decided_at=at, **fields)  # type: ignore[arg-type]
        return self._claim(req, d)

    def end(self, request_id: str, how: str, why: str = "", at=None) -> bool:
        """End a request nobody waits for any more (``how``: expire or withdraw),
        exactly once: True when this call ended it, False when it was already
        decided or ended (the first outcome stands)."""
        if how not in ENDINGS:
            raise BadQuery(f"unknown ending {how!r}: expire or withdraw")
        req = self.get(request_id)
        if req.decision is not None:
            return False
        d = InboxDecision(verdict=how, note=_one_line(why)[:MAX_NOTE], decided_by=who(),  # type: ignore[arg-type]
                          decided_at=at or now())
        try:
            self._claim(req, d)
        except AlreadyDecided:
            return False
        return True

    def _claim(self, req: InboxRequest, d: InboxDecision) -> InboxRequest:
        """Write ``d`` as the request's one outcome (exclusive create), then its ledger event."""
        request_id = req.id
        if not create_once(self.decision_path(request_id), d.model_dump_json(indent=1).encode()):
            first = self.read_decision(request_id)
            what = first.describe(request_id) if first else f"request {request_id} was already decided"
            raise (NobodyWaiting if first is not None and first.ended else AlreadyDecided)(
                f"{what}; a second decision is refused" if not (first and first.ended)
                else f"{what}: the decision is refused")
        # the id names this decision (a refused forgery before it keeps its own event)
        Ledger(self.state_dir).append([Event(content_id("inbox.decision", request_id, d.decided_at.isoformat(),
                                                        d.signature), "inbox.decision",
                                             {"request_id": request_id, **d.model_dump(mode="json")},
                                             ts=d.decided_at.isoformat())])
        return req.model_copy(update={"status": STATUS_OF[d.verdict], "decision": d})

    def refuse(self, request_id: str, why: str) -> str | None:
        """Set aside a decision a verifier refused (not signed by the pinned key,
        or for another input): the file moves to ``<id>.refused.<n>.json``, an
        ``inbox.refused`` event records it, and the request is open again for the
        supervisor. Returns the new name, or None when there was nothing to move."""
        d = self.read_decision(request_id)
        path = self.decision_path(request_id)
        n = 1
        while (self.dir / f"{request_id}.refused.{n}.json").exists():
            n += 1
        dest = self.dir / f"{request_id}.refused.{n}.json"
        try:
            os.rename(path, dest)
        except FileNotFoundError:
            return None
        Ledger(self.state_dir).append([Event(content_id("inbox.refused", request_id, str(n)), "inbox.refused",
                                             {"request_id": request_id, "why": _one_line(why)[:MAX_NOTE],
                                              "decision": d.model_dump(mode="json") if d else None})])
        return dest.name

    def wait(self, request_id: str, timeout: float, poll: float = 0.05) -> InboxRequest:
        """The request once decided (by any process), or still pending at ``timeout`` seconds."""
        req = self.get(request_id)
        if req.decision is not None:
            return req
        path = self.decision_path(request_id)
        deadline = time.monotonic() + max(0.0, float(timeout))
        poll = min(max(float(poll), 0.005), 1.0)
        while True:
            if os.path.lexists(path):  # one lstat: the name appears only when the decision is whole
                return self._with_decision(req)  # (a planted symlink or FIFO there reads as damage)
            left = deadline - time.monotonic()
            if left <= 0:
                return self._with_decision(req)
            time.sleep(min(poll, left))

