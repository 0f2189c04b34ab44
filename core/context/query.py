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


# -- relative days ------------------------------------------------------------------------
_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "two": 2, "three": 3,
            "four": 4, "five": 5, "six": 6, "seven": 7}
_DAYS_AGO_RE = re.compile(r"\b(\d{1,2}|two|three|four|five|six|seven) days ago\b|(\d{1,2}|[一两二三四五六七])\s*天前")
_FIXED: tuple[tuple[re.Pattern[str], int, int], ...] = (
    # (pattern, from N days ago, to M days ago), the most specific first
    (re.compile(r"day before yesterday|大前天"), 2, 3),
    (re.compile(r"前天"), 2, 2),
    (re.compile(r"\byesterday\b|\blast night\b|昨天|昨晚|昨日"), 1, 1),
    (re.compile(r"\btoday\b|\bthis morning\b|今天|今早|今晚|刚才"), 0, 0),
    (re.compile(r"\blast week\b|上周|上个星期|上星期"), 13, 7),
    (re.compile(r"\bthis week\b|这周|本周|这个星期"), 6, 0),
)


def day_window(text: str, now: datetime | None = None) -> tuple[date, date] | None:
    """The local days a message points at, (first, last) inclusive; None when it names none."""
    low = text.lower()
    today = (now.astimezone() if now is not None else datetime.now().astimezone()).date()
    m = _DAYS_AGO_RE.search(low)
    if m:
        raw = m.group(1) or m.group(2)
        n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, 0)
        if n:
            day = today - timedelta(days=n)
            return day, day
    for pattern, back_from, back_to in _FIXED:
        if pattern.search(low):
            return today - timedelta(days=back_from), today - timedelta(days=back_to)
    return None
