"""One episode from a person's or an agent's own words (``ars remember``, the MCP
``remember`` tool): checked, redacted, and named by its content."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Sequence

from core.errors import BadQuery

MAX_REMEMBER = 100_000  # characters of text one remember() takes


def remembered_episode(text: str, summary: str | None = None, topics: Sequence[str] = (),
                       session_id: str | None = None, source: str = "manual"):
    """The redacted Episode to store; BadQuery when an input must be fixed. The same text
    from the same source and session is the same episode."""
    from pydantic import ValidationError

    from core.errors import first_error
    from core.models import Episode

    if not isinstance(text, str) or not text.strip():
        raise BadQuery("nothing to remember: give the text to store")
    if len(text) > MAX_REMEMBER:
        raise BadQuery(f"text is {len(text):,} characters, over the {MAX_REMEMBER:,} limit of one "
                       "memory: store a summary, or split it")
    if summary is not None and (not isinstance(summary, str) or len(summary) > 4_000):
        raise BadQuery("summary must be text of at most 4,000 characters")
    if isinstance(topics, str):
        topics = [topics]
    topics = [t.strip() for t in topics if isinstance(t, str) and t.strip()]
    if len(topics) > 100 or any(len(t) > 200 for t in topics):
        raise BadQuery("topics: at most 100, each at most 200 characters")
    session = (session_id or "").strip()
    if len(session) > 500:
        raise BadQuery("session_id is over 500 characters")
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
        raise BadQuery(f"cannot remember it: {first_error(exc)}") from None
    return redact_episode(ep)
