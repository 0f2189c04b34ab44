"""Configuration in force, from ``ARS_*`` environment variables.

Secrets are ``SecretStr`` so that printing the settings never shows them;
``public()`` is what ``ars doctor`` prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ARS_", extra="ignore")

    state_dir: Path = Path("state")

    # Neo4j is optional: without a URI the tier reports "skipped", not "down".
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str | None = None

    # Per-tier deadlines (seconds). Recall answers within the largest of them
    # whatever a tier does; a tier that misses its deadline reports "timeout".
    neo4j_deadline: float = 0.25
    sqlite_deadline: float = 0.25
    files_deadline: float = 0.5
    # Driver fail-fast settings; the driver's defaults wait about 60 s.
    neo4j_connect_timeout: float = 1.0
    # The circuit breaker: after a failure Neo4j is not asked again for this
    # long, except by one probe.
    neo4j_breaker_cooldown: float = 5.0

    openai_base_url: str | None = None
    openai_model: str = "gpt-4o-mini"
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    # LLM enrichment (core/enrich/llm.py): off unless asked for; each call
    # gives up after this many seconds and the episode keeps its
    # deterministic enrichment, marked for `ars enrich --pending`.
    openai_timeout: float = 20.0
    enrich_with_llm: bool = False

    def public(self) -> dict[str, Any]:
        """Settings without secret values (only whether they are set)."""
        out = self.model_dump(mode="json")
        for key in ("neo4j_password", "openai_api_key"):
            out[key] = "set" if getattr(self, key) else "unset"
        return out


def load_settings(**overrides: Any) -> Settings:
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
