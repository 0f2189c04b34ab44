"""Times in a query ("昨天", "上周", "三天前", "yesterday", "last Tuesday", "in May")
resolved against the moment it is asked, as windows of time recall can weigh.

The parsing is ``dateparser``'s (BSD-3-Clause, Chinese and English among its
languages): it finds the expressions and says each one's period (day, week,
month, year), which becomes the window: "昨天" is that whole day, "上周" the
calendar week before this one, "in May" the month. Two things are done before
it, each because dateparser misses it on its own: Chinese numerals in counts
("三天前" -> "3天前"), and a cheap look for any time word at all, so a query
with none (most of them) never loads the parser (~0.2 s in a fresh process:
every agent hook is one).

``TIME_WEIGHT``: what a memory inside a window adds in the fusion
(``scoring.fuse``); recency stays a separate, small signal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

# words that can start a time expression; a query without any is not parsed at all
_HINT = re.compile(
    r"[昨今明前后後去上下本这這][天日晚早周週个個月年]|[天周週月年]前|星期|礼拜|禮拜|刚才|周[一二三四五六日天]"
    r"|[一二三四五六七八九十\d]+\s*月"
    r"|\b(?:yesterday|today|tonight|ago|last|this|past|previous|earlier|week|weeks|month|months|year|years"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|january|february|march|april|may|june|july|august|september|october|november|december"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2})\b", re.IGNORECASE)
_CN_DIGIT = {"零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_COUNT = re.compile(r"([零一二两兩三四五六七八九十]{1,3})(?=\s*(?:天|日|周|週|星期|礼拜|年|小时|小時|个月|個月|个星期|個星期))")
# a match dateparser makes of a short word alone ("we", "sat", "mar") is not a time
_LATIN_WORD = re.compile(r"^[a-z]{1,3}$", re.IGNORECASE)


MAX_CHARS = 400  # of a query's asking part that is parsed for times (``windows``)
LABEL_CHARS = 40  # of a phrase shown in a label


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime  # exclusive
    phrase: str  # what in the query said it
    period: str  # day, week, month, year

    def label(self) -> str:
        """'前天 = 2026-12-03', 'last week = 2026-11-23 to 2026-11-29 (+08:00)'."""
        last = self.end - timedelta(days=1)
        span = (self.start.date().isoformat() if self.period == "day" else
                f"{self.start.date().isoformat()} to {last.date().isoformat()}")
        zone = self.start.strftime("%z") if self.start.tzinfo is not None else ""
        phrase = self.phrase if len(self.phrase) <= LABEL_CHARS else self.phrase[:LABEL_CHARS - 1] + "…"
        return f"{phrase} = {span}" + (f" ({zone[:3]}:{zone[3:]})" if zone else "")

    def holds(self, ts: datetime | None) -> bool:
        if ts is None:
            return False
        if (ts.tzinfo is None) != (self.start.tzinfo is None):
            # an aware window (the asker's zone) and a naive time: taken as UTC, as episodes' are
            # (core/models.py); a naive window and an aware time: the time's wall clock
            ts = ts.replace(tzinfo=timezone.utc) if ts.tzinfo is None else ts.replace(tzinfo=None)
        return self.start <= ts < self.end


def _cn_number(s: str) -> int:
    if s == "十":
        return 10
    if "十" in s:
        tens, _, ones = s.partition("十")
        return (_CN_DIGIT.get(tens, 1) if tens else 1) * 10 + (_CN_DIGIT.get(ones, 0) if ones else 0)
    return int("".join(str(_CN_DIGIT[c]) for c in s if c in _CN_DIGIT) or 0)


# everyday words for a day or a week, as the words dateparser knows for the same time
_SAME_TIME = {"昨晚": "昨天", "昨日": "昨天", "今早": "今天", "今晚": "今天", "刚才": "今天", "上个星期": "上周",
              "上星期": "上周", "这个星期": "本周", "这周": "本周", "這週": "本周"}
_SAME_TIME_RE = re.compile("|".join(sorted(_SAME_TIME, key=len, reverse=True)))


def normalise(text: str) -> str:
    """Chinese counts before a unit of time as digits ("三天前" -> "3天前", not "五月":
    a month's name), everyday words for a day or week as the parser's ("昨晚" -> "昨天"),
    and English possessives dropped ("yesterday's" -> "yesterday")."""
    text = re.sub(r"(?<=[a-z])['’]s\b", "", text, flags=re.IGNORECASE)
    text = _SAME_TIME_RE.sub(lambda m: _SAME_TIME[m.group(0)], text)
    return _CN_COUNT.sub(lambda m: str(_cn_number(m.group(1))), text)


def _window(day: datetime, period: str, phrase: str) -> Window:
    d = day.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        start = d - timedelta(days=d.weekday())
        return Window(start, start + timedelta(days=7), phrase, period)
    if period == "month":
        start = d.replace(day=1)
        nxt = (start + timedelta(days=32)).replace(day=1)
        return Window(start, nxt, phrase, period)
    if period == "year":
        start = d.replace(month=1, day=1)
        return Window(start, start.replace(year=start.year + 1), phrase, period)
    return Window(d, d + timedelta(days=1), phrase, "day")


def windows(text: str, now: datetime) -> list[Window]:
    """The windows of time ``text`` names, resolved against ``now`` in ``now``'s zone
    (an aware ``now`` gives aware windows: "yesterday" is the asker's yesterday);
    [] when it names none. Only the last ``MAX_CHARS`` characters are read: a question names
    its time near where it asks, and the parser's time grows with its input (a 4,000-character
    prompt full of time words took 0.6 s)."""
    text = text[-MAX_CHARS:]
    if not _HINT.search(text):
        return []
    try:
        from dateparser.date import DateDataParser
        from dateparser.search import search_dates
    except ImportError:  # an install without it: recall answers without time
        return []
    settings = {"RELATIVE_BASE": now.replace(tzinfo=None), "PREFER_DATES_FROM": "past",
                "RETURN_AS_TIMEZONE_AWARE": False}
    plain = normalise(text)
    try:
        found = search_dates(plain, languages=["zh", "en"], settings=settings) or []
    except Exception:  # noqa: BLE001 - a parser error costs the time signal, never the recall
        return []
    parser = DateDataParser(languages=["zh", "en"], settings=settings)
    out: list[Window] = []
    for phrase, when in found:
        phrase = phrase.strip()
        if _LATIN_WORD.match(phrase) or not _HINT.search(phrase):
            continue
        # the phrase alone, parsed again: its period, and a surer date ("5月" found in a
        # sentence came back as July; alone it is May)
        data = parser.get_date_data(phrase)
        if data and data.date_obj:
            when, period = data.date_obj, data.period or "day"
        else:
            period = "day"
        w = _window(when.replace(tzinfo=None), period, phrase)
        if now.tzinfo is not None:
            w = Window(w.start.replace(tzinfo=now.tzinfo), w.end.replace(tzinfo=now.tzinfo), w.phrase, w.period)
        if w.start > now + timedelta(days=1):
            continue  # a future date ("in May" asked in April means last May: the parser prefers the past)
        if w not in out:
            out.append(w)
    return out
