"""An episode's one-line summary: the session title and the first meaningful
request (or the first line a person wrote or was told); ``clip`` cuts any text to
one line at a word boundary."""

from __future__ import annotations

import re

from core.enrich.hints import Hints

SUMMARY_CHARS = 160
TITLED_SUMMARY_CHARS = 220
_SPACE_RE = re.compile(r"\s+")
_ROLE_PREFIX_RE = re.compile(r"^\s*(?:user|assistant|tool|system|[\w-]+ →[^:]*):\s*", re.I)


def clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, cut at a word boundary."""
    s = _SPACE_RE.sub(" ", text).strip()
    if len(s) <= limit:
        return s
    cut = s[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _meaningful(text: str) -> bool:
    """A request worth summarising: a few words, or a few CJK characters."""
    s = text.strip()
    if not s or s.startswith("/") and " " not in s:
        return False
    cjk = sum(1 for ch in s[:40] if "\u3400" <= ch <= "\ud7af")
    return cjk >= 4 or len(s.split()) >= 3


def summarize(text: str, hints: Hints | None = None) -> str:
    """The first meaningful user request (or the first line), after the title."""
    h = hints or Hints()
    request = next((r for r in h.requests if _meaningful(r)), "")
    if not request:
        request = _first_line(text) or (h.requests[0] if h.requests else "")
    title = clip(h.title, 120) if h.title else ""
    if title and request and clip(request, 120).lower() != title.lower():
        return clip(f"{title} — {request}", TITLED_SUMMARY_CHARS)
    return title or clip(request, SUMMARY_CHARS)


def _first_line(text: str) -> str:
    """The first line a person wrote or was told (not a tool's output)."""
    fallback = ""
    for line in text.splitlines()[:200]:
        if not line.strip():
            continue
        said = not line.startswith(("tool", "assistant →")) and _meaningful(_ROLE_PREFIX_RE.sub("", line))
        clean = _ROLE_PREFIX_RE.sub("", line).strip(" #*-")
        if said and clean:
            return clean
        fallback = fallback or clean
    return fallback
