"""LLM enrichment through an OpenAI-compatible chat model, with a fallback.

``enrich(episode, settings)`` asks the model configured in ``Settings``
(``openai_base_url`` for Ollama, vLLM or any compatible server;
``openai_model``; ``OPENAI_API_KEY``; ``openai_timeout``) for a summary,
topics, typed entities and relations as JSON, validated with pydantic. The
model's entities are merged with the deterministic ones (tool calls, paths,
commands and URLs the parser saw for sure).

An episode remembers how it was enriched in ``meta["enrichment"]``:

* ``"llm"``: the model answered (``meta["enrichment_model"]`` names it);
* ``"deterministic"``: LLM enrichment was not asked for;
* ``"deterministic:pending"``: it was asked for and failed (HTTP 429 or 5xx,
  quota gone, timeout, connection refused, malformed JSON, an answer that
  does not fit the schema); ``meta["enrichment_error"]`` says why in one line.
  ``enrich_pending(memory, settings)`` upgrades these later
  (``ars enrich --pending``).

Never raises for a model failure, never retries inside a call
(``max_retries=0``), and after an outage (quota, timeout, refused
connection) a circuit breaker skips the model for a cooldown, so a batch
costs one timeout, not one per episode. Secrets never appear in errors.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Callable, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.infra.breaker import CircuitBreaker, CircuitOpen
from core.config import Settings
from core.errors import first_error
from core.models import Entity, Episode, Relation
from core.enrich.extract import enrich_deterministic

PENDING = "deterministic:pending"
MAX_INPUT_CHARS = 12_000
MAX_TOPICS = 10
BREAKER_COOLDOWN = 60.0
_ENTITY_TYPES = ("person", "agent", "product", "project", "file", "tool", "technology", "channel", "concept",
                 "endpoint", "command")

SYSTEM_PROMPT = (
    "You index an AI agent's memory. Read one episode of a conversation or work session and answer with "
    "one JSON object, nothing else, with keys:\n"
    '  "summary": one sentence (at most 200 characters) saying what happened or was decided;\n'
    '  "topics": 3 to 8 short lowercase topic phrases;\n'
    '  "entities": [{"name": ..., "type": ...}] for the people, agents, products, projects, files, tools, '
    "technologies, channels, concepts, endpoints (URLs) and shell commands that matter, type one of "
    + ", ".join(_ENTITY_TYPES) + ";\n"
    '  "relations": [{"src": entity name, "rel": short verb, "dst": entity name}].\n'
    "Keep names as written in the episode. Write the summary and topics in the episode's language."
)


class LLMEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1, max_length=300)
    type: str = "concept"

    @field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, v: Any) -> str:
        # A model may invent a type ("organization"): keep the entity as a concept.
        s = str(v or "").strip().lower()
        return s if s in _ENTITY_TYPES else "concept"


class LLMRelation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    src: str = Field(min_length=1, max_length=300)
    rel: str = Field(min_length=1, max_length=60)
    dst: str = Field(min_length=1, max_length=300)


class LLMEnrichment(BaseModel):
    """What the model must answer; anything else is a schema mismatch."""

    model_config = ConfigDict(extra="ignore")
    summary: str = Field(min_length=1, max_length=600)
    topics: list[str] = Field(default_factory=list, max_length=30)
    entities: list[LLMEntity] = Field(default_factory=list, max_length=200)
    relations: list[LLMRelation] = Field(default_factory=list, max_length=200)

    @field_validator("topics")
    @classmethod
    def _topics(cls, v: list[str]) -> list[str]:
        return [t.strip() for t in v if isinstance(t, str) and t.strip()]


class EnrichmentFailed(Exception):
    """The model gave no usable answer; ``outage`` when the service itself failed."""

    def __init__(self, reason: str, outage: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.outage = outage


def _one_line(text: str, limit: int = 200) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S | re.I)


def parse_answer(content: str | None) -> LLMEnrichment:
    """The model's message as a validated ``LLMEnrichment``; raises
    ``EnrichmentFailed`` for malformed JSON or a schema mismatch."""
    if not content or not content.strip():
        raise EnrichmentFailed("malformed answer: empty message")
    text = content.strip()
    m = _FENCE_RE.match(text)
    if m:
        text = m.group(1)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EnrichmentFailed(f"malformed JSON from the model: {_one_line(str(exc), 100)}") from None
    if not isinstance(data, dict):
        raise EnrichmentFailed(f"schema mismatch: expected a JSON object, got {type(data).__name__}")
    try:
        return LLMEnrichment.model_validate(data)
    except ValidationError as exc:
        raise EnrichmentFailed(f"schema mismatch: {first_error(exc, 'answer')}") from None


def _describe_api_error(exc: Exception) -> tuple[str, bool]:
    """(one-line reason, is an outage) for an exception of the openai client."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout: the model did not answer in time", True
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot reach the model server: {_one_line(str(exc.__cause__ or exc), 120)}", True
    if isinstance(exc, openai.APIStatusError):
        code = getattr(exc, "code", None) or getattr(exc, "type", None) or ""
        status = exc.status_code
        label = {429: "rate limited or quota exhausted"}.get(status, "")
        reason = f"HTTP {status}" + (f" {code}" if code else "") + (f" ({label})" if label else "")
        # 429 and 5xx say the service is unavailable now; 4xx (bad model name,
        # bad request) fail every call the same way, so they are outages too.
        return reason, True
    return f"{exc.__class__.__name__}: {_one_line(str(exc), 120)}", False


class LLMEnricher:
    """One client and one breaker for a configuration."""

    def __init__(self, settings: Settings, client: Any = None):
        self.settings = settings
        self.model = settings.openai_model
        self.breaker = CircuitBreaker(cooldown=BREAKER_COOLDOWN)
        self._client = client

    @property
    def configured(self) -> bool:
        return bool(self.settings.openai_base_url or self.settings.openai_api_key)

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            key = self.settings.openai_api_key
            self._client = OpenAI(
                base_url=self.settings.openai_base_url or None,
                # local servers (Ollama, vLLM) take any key; the client insists on one
                api_key=key.get_secret_value() if key else "not-needed",
                timeout=self.settings.openai_timeout,
                max_retries=0,
            )
        return self._client

    def ask(self, ep: Episode) -> LLMEnrichment:
        """The model's enrichment of one episode; raises ``EnrichmentFailed``."""
        if not self.configured:
            raise EnrichmentFailed("LLM enrichment is not configured (set ARS_OPENAI_BASE_URL or OPENAI_API_KEY)")
        try:
            self.breaker.before_call()
        except CircuitOpen as exc:
            raise EnrichmentFailed(f"skipped: {_one_line(str(exc), 160)}", outage=True) from None
        head = [f"source: {ep.source}"]
        if ep.agent:
            head.append(f"agent: {ep.agent}")
        if ep.meta.get("title"):
            head.append(f"session title: {ep.meta['title']}")
        text = ep.text if len(ep.text) <= MAX_INPUT_CHARS else ep.text[:MAX_INPUT_CHARS] + "\n[…]"
        try:
            resp = self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": "\n".join(head) + "\n\nEpisode:\n" + text},
                ],
                response_format={"type": "json_object"},
                temperature=0,
            )
        except Exception as exc:  # noqa: BLE001 - every client failure becomes a reason
            reason, outage = _describe_api_error(exc)
            if outage:
                self.breaker.failure(reason)
            raise EnrichmentFailed(reason, outage) from None
        self.breaker.success()  # the service answered, whatever it said
        try:
            content = resp.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise EnrichmentFailed("malformed answer: no message in the response") from None
        return parse_answer(content)

    def enrich(self, ep: Episode, use_llm: bool | None = None) -> Episode:
        """The episode enriched by the model, or deterministically (marked
        pending when the model was asked and failed)."""
        base = _deterministic_base(ep)
        want = self.settings.enrich_with_llm if use_llm is None else use_llm
        if not want:
            meta = {**base.meta, "enrichment": "deterministic"}
            meta.pop("enrichment_error", None)
            return base.model_copy(update={"meta": meta})
        try:
            answer = self.ask(base)
        except EnrichmentFailed as exc:
            meta = {**base.meta, "enrichment": PENDING, "enrichment_error": _one_line(exc.reason)}
            return base.model_copy(update={"meta": meta})
        return merge(base, answer, self.model)


def _deterministic_base(ep: Episode) -> Episode:
    """A parser already enriched its episodes deterministically (with hints the
    text alone no longer has): keep that; enrich anything else now."""
    if ep.meta.get("enrichment"):
        return ep
    return enrich_deterministic(ep, keep_given=True)


def merge(base: Episode, answer: LLMEnrichment, model: str) -> Episode:
    """The model's summary and topics; its entities and relations added to the
    deterministic ones (those come from the format itself and stay)."""
    topics: list[str] = []
    for t in [*answer.topics, *base.topics]:
        if t.lower() not in (x.lower() for x in topics):
            topics.append(t)
    entities: list[Entity] = []
    seen: set[tuple[str, str]] = set()
    for e in [*(Entity(name=x.name.strip(), type=x.type) for x in answer.entities if x.name.strip()),  # type: ignore[arg-type]
              *base.entities]:
        key = (e.type, e.name.lower())
        if key not in seen:
            seen.add(key)
            entities.append(e)
    relations: list[Relation] = []
    rseen: set[tuple[str, str, str]] = set()
    for r in [*(Relation(src=x.src.strip(), rel=x.rel.strip(), dst=x.dst.strip()) for x in answer.relations),
              *base.relations]:
        key = (r.src.lower(), r.rel.lower(), r.dst.lower())
        if key not in rseen and r.src and r.dst:
            rseen.add(key)
            relations.append(r)
    meta = {**base.meta, "enrichment": "llm", "enrichment_model": model}
    meta.pop("enrichment_error", None)
    return base.model_copy(update={
        "summary": _one_line(answer.summary, 300), "topics": topics[:MAX_TOPICS], "entities": entities,
        "relations": relations, "meta": meta,
    })


# -- module-level entry points -------------------------------------------------------------
_enrichers: dict[tuple, LLMEnricher] = {}
_lock = threading.Lock()


def enricher_for(settings: Settings) -> LLMEnricher:
    """One enricher (client and breaker) per configuration, reused across calls."""
    key = (settings.openai_base_url, settings.openai_model, settings.openai_timeout,
           settings.openai_api_key.get_secret_value() if settings.openai_api_key else None)
    with _lock:
        enr = _enrichers.get(key)
        if enr is None:
            enr = _enrichers[key] = LLMEnricher(settings)
        return enr


def enrich(episode: Episode, settings: Settings, *, use_llm: bool | None = None) -> Episode:
    """The episode enriched as ``settings`` say (``enrich_with_llm``), or as
    ``use_llm`` forces; never raises for a model failure."""
    return enricher_for(settings).enrich(episode, use_llm)


def enrich_many(episodes: Iterable[Episode], settings: Settings, *, use_llm: bool | None = None) -> list[Episode]:
    enr = enricher_for(settings)
    return [enr.enrich(ep, use_llm) for ep in episodes]


def pending_ids(memory: Any) -> list[str]:
    """Ids of stored episodes marked ``deterministic:pending``."""
    store = memory.sqlite
    conn = getattr(store, "_conn", None)
    if conn is not None:
        try:
            rows = conn().execute(
                "SELECT id FROM episodes WHERE json_extract(meta, '$.enrichment') = ? ORDER BY rowid", (PENDING,)
            ).fetchall()
            return [r[0] for r in rows]
        except Exception:  # noqa: BLE001 - an older schema: scan instead
            pass
    out = []
    for eid in store.ids():
        ep = store.get(eid)
        if ep is not None and ep.meta.get("enrichment") == PENDING:
            out.append(eid)
    return out


def enrich_pending(memory: Any, settings: Settings, *, store: Callable[[list[Episode]], Any] | None = None,
                   limit: int | None = None, batch: int = 50) -> tuple[int, int]:
    """Ask the model again for every episode marked pending; store the ones
    it enriches (through ``store``, default ``memory.store``). Returns
    ``(upgraded, still_pending)``. Stops asking once the model is down
    (the rest stay pending)."""
    ids = pending_ids(memory)
    if limit is not None:
        ids = ids[:limit]
    save = store or memory.store
    enr = enricher_for(settings)
    upgraded = 0
    still = 0
    done: list[Episode] = []
    for i, eid in enumerate(ids):
        ep = memory.sqlite.get(eid)
        if ep is None:
            continue
        new = enr.enrich(ep, use_llm=True)
        if new.meta.get("enrichment") == "llm":
            done.append(new)
            upgraded += 1
        else:
            still += 1
            if enr.breaker.snapshot().state == "open":
                still += len(ids) - i - 1  # the model is down: the rest stay pending untouched
                break
        if len(done) >= batch:
            save(done)
            done = []
    if done:
        save(done)
    return upgraded, still
