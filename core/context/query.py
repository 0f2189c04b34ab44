"""A turn's query: the user's message (and the turn before it), made safe to search.

An agent's hook passes whatever the user typed: a pasted 1 MB log, bytes that are not
UTF-8, a lone surrogate from a broken terminal. None of it may raise into the turn, and
none of it may cost more than a short message: the prompt is cut to its head and tail (a
question usually ends a paste), cleaned of control characters and of code points UTF-8
cannot hold, and the previous reply adds its last lines (what "yes, do it" answers).
Relative days in the message ("yesterday", "前天") give a time window the block prefers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

HEAD_CHARS = 1000  # of a long prompt: its start …
TAIL_CHARS = 1500  # … and its end (where a question after a paste is)
PREVIOUS_CHARS = 600  # of the turn before: its end
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class TurnQuery:
    text: str  # what recall searches
    prompt: str  # the user's message as searched (cleaned, cut)
    window: tuple[date, date] | None  # local days the message names ("yesterday"), inclusive


def clean(value: object, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """Text safe to tokenise and to write into a ledger line: str (bytes decoded as
    UTF-8, anything else ""), cut to ``head`` + ``tail`` characters, without control
    characters or lone surrogates."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value[: (head + tail) * 4]).decode("utf-8", "replace")
    if not isinstance(value, str):
        return ""
    if len(value) > head + tail:
        value = value[:head] + ("\n…\n" + value[-tail:] if tail else "")
    value = _SURROGATE_RE.sub("\ufffd", value)
    return _CONTROL_RE.sub(" ", value).strip()


def build(prompt: object, previous: object = None, now: datetime | None = None) -> TurnQuery:
    said = clean(prompt)
    before = clean(previous, head=0, tail=PREVIOUS_CHARS) if previous else ""
    text = f"{said}\n{before}" if before else said
    return TurnQuery(text=text, prompt=said, window=day_window(said, now))


# -- the days a message names ------------------------------------------------------------
def day_window(text: str, now: datetime | None = None) -> tuple[date, date] | None:
    """The local days a message points at, (first, last) inclusive; None when it names none.
    The same reading as recall's (core/memory/time_window.py, dateparser): done here, before
    the turn's deadline starts, so a first time word pays the parser's load outside it."""
    from core.memory.time_window import windows

    # days and weeks only: a month or a year the message names is often when the thing happened,
    # told later (docs/design.md), too wide to bring its episodes in without a word in common
    found = [w for w in windows(text, (now or datetime.now()).astimezone()) if w.period in ("day", "week")]
    if not found:
        return None
    return min(w.start for w in found).date(), max(w.end - timedelta(days=1) for w in found).date()
