"""Mixed Chinese/English tokenising, index terms and snippets.

Two vocabularies on purpose:

* ``tokenize`` gives the *surface tokens* a person reads (lowercase English
  words; each CJK run as itself plus its bigrams, a lone CJK character as a
  unigram). ``第一性原理`` -> ``第一性原理, 第一, 一性, 性原, 原理``.
* ``index_terms`` gives the *match terms* every store indexes: English words
  stemmed (so "painted" finds "paintings") and CJK bigrams/unigrams only. A
  whole CJK run is a useless index term (a clause without spaces), so it is
  kept for phrase scoring, not for the index.

Stop words apply to queries only: a document keeps every word so that a later
query with a different stop list still finds it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

import snowballstemmer

# CJK ideographs (incl. extension A and compatibility), kana and hangul: scripts
# written without spaces, where bigrams stand in for words.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[a-z0-9_]+")
_CJK_RUN_RE = re.compile(rf"[{_CJK}]+")

# Kept small: BM25's idf already discounts common words; these are the ones
# that add nothing but noise to a query. Chinese function characters are not
# listed because they only occur inside bigrams.
STOP_WORDS: frozenset[str] = frozenset(
    """a an and are as at be been but by can could did do does for from had has
    have how i if in into is it its me my of on or our so that the their them
    then there these they this to was we were what when where which who whom why
    will with would you your he she his her him s t""".split()
)

# Chinese function characters (particles, pronouns, auxiliaries, light verbs
# and directions). A query bigram holding one mostly spans a word boundary or
# grammar ("我要", "了吗", "去看"), not a topic, so queries skip such bigrams;
# documents keep them all. On MADial-zh this lifts R@5 from 53 to 58.
CJK_STOP_CHARS = frozenset(
    "的了吗呢吧啊呀哦嗯哈么是我你他她它们这那在和就都也很会要能可以个不没还又把被让给着得地之而但"
    "如果为所从到些样怎哪谁嘛啦呗咱上下里来去过说想看"
)

# Transcript scaffolding ARS itself writes into an episode's text (core/ingest/formats/message_text.py):
# the role label that opens each line ("user: ", "assistant → Bash: ", "tool Bash (error): ") and a tool
# call's argument names ("command=", "file_path="). They are in every transcript, so indexed as words
# they matched every query that says "user" (bm25 0, yet each tier's min-max scaling gave them a large
# share): they are never index terms. Only the label word goes; a tool's name and a qualifier such as
# "(error)" stay, and so does the word "user" anywhere else in a line.
_ROLES = r"compaction[ \t]+summary|user|assistant|system|developer|human|model|summary|toolresult|tool_result|function"
_SCAFFOLD_RE = re.compile(
    rf"^[ \t]*(?:{_ROLES})(?=[ \t]*(?:\([^)\n]{{0,40}}\))?[ \t]*(?::|→))"
    rf"|^[ \t]*tool(?=(?:[ \t]+[^\s:()]+)?(?:[ \t]*\([^)\n]{{0,40}}\))?[ \t]*:)"
    r"|(?<=: |; )(?:command|cmd|file_path|filePath|path|url|query|pattern|description|prompt|old_string|new_string"
    r"|content)=",
    re.MULTILINE | re.IGNORECASE)


def strip_scaffolding(text: str) -> str:
    """``text`` without the transcript's role labels and tool-argument names (see ``_SCAFFOLD_RE``)."""
    return _SCAFFOLD_RE.sub("", text)


_stemmer = snowballstemmer.stemmer("english")
_STEMS: dict[str, str] = {}  # word -> stem for index_terms, bounded
_STEMS_MAX = 500_000


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """English stem of a lowercase word; digits and identifiers pass through."""
    if len(word) <= 3 or not word.isalpha():
        return word
    return _stemmer.stemWord(word)


def is_cjk(token: str) -> bool:
    return bool(_CJK_RUN_RE.fullmatch(token))


def _cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str, *, query: bool = False) -> list[str]:
    """Surface tokens, de-duplicated in first-seen order.

    With ``query=True`` English stop words and CJK bigrams holding a function
    character are dropped (unless that would leave nothing: a query of only
    stop words still searches for them).
    """
    out: list[str] = []
    seen: set[str] = set()

    def add(tok: str) -> None:
        if tok not in seen:
            seen.add(tok)
            out.append(tok)

    stops: list[str] = []
    skipped: list[str] = []  # function bigrams left out of a query
    for m in _TOKEN_RE.finditer(text.lower()):
        tok = m.group()
        if is_cjk(tok):
            add(tok)
            if len(tok) > 1:
                for g in _cjk_grams(tok):
                    if query and set(g) & CJK_STOP_CHARS:
                        skipped.append(g)
                    else:
                        add(g)
        elif query and tok in STOP_WORDS:
            stops.append(tok)
        else:
            add(tok)
    if query and not any(term_of(t) for t in out):
        # only function words: search for them rather than for nothing
        for tok in skipped + stops:
            add(tok)
    return out


def term_of(token: str) -> str | None:
    """The index term for a surface token, or None when it is not indexed
    (a multi-character CJK run: its bigrams are)."""
    if is_cjk(token):
        return token if len(token) <= 2 else None
    return stem(token)


def query_terms(tokens: Iterable[str]) -> list[str]:
    """Distinct index terms of query tokens, in order."""
    seen: dict[str, None] = {}
    for tok in tokens:
        t = term_of(tok)
        if t is not None:
            seen.setdefault(t, None)
    return list(seen)


def index_terms(text: str) -> list[str]:
    """Every index term of a document, in order, with repeats (term frequency
    matters to BM25); the transcript's scaffolding is not among them."""
    # the hot loop of ingestion and sync: a plain dict in front of ``stem``
    # (cheaper than lru_cache's call), and a token's kind told by its first
    # character (words are ASCII, everything else _TOKEN_RE matches is CJK)
    out: list[str] = []
    add, extend, known = out.append, out.extend, _STEMS
    for tok in _TOKEN_RE.findall(strip_scaffolding(text).lower()):
        if tok[0] > "\x7f":
            extend(_cjk_grams(tok))
        else:
            s = known.get(tok)
            if s is None:
                s = stem(tok)
                if len(known) < _STEMS_MAX:
                    known[tok] = s
            add(s)
    return out


def index_text(text: str) -> str:
    """``index_terms`` joined by spaces: what a whitespace/unicode61 full-text
    index sees, so CJK bigrams become separate tokens there."""
    return " ".join(index_terms(text))


def snippet(text: str, tokens: Iterable[str], width: int = 160) -> str:
    """The window of ``text`` holding the most distinct query tokens."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    low = text.lower()
    positions: list[tuple[int, str]] = []
    for tok in tokens:
        if not tok:
            continue
        start = 0
        for _ in range(50):  # enough occurrences to place a window
            i = low.find(tok, start)
            if i < 0:
                break
            positions.append((i, tok))
            start = i + 1
    if not positions:
        return text[: width - 1] + "…"
    positions.sort()
    # Two pointers over the sorted hits: the window [lo, hi] spanning at most
    # ``width`` characters with the most distinct tokens.
    counts: dict[str, int] = {}
    best_start, best_count, lo = positions[0][0], 0, 0
    for pos, tok in positions:
        counts[tok] = counts.get(tok, 0) + 1
        while positions[lo][0] < pos - width * 2 // 3:
            old = positions[lo][1]
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
            lo += 1
        if len(counts) > best_count:
            best_count, best_start = len(counts), positions[lo][0]
    start = max(0, best_start - width // 6)
    end = min(len(text), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
