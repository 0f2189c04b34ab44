"""What a hit shows of its episode: the part that matched, then what came of it.

An episode of a transcript is a run of messages (``user: …``, ``assistant → Bash: …``,
``tool Bash: …``, ``assistant: …``; core/ingest/formats/message_text.py). A window of
characters around the query's words (``text.snippet``) mostly showed the request, cut
before its outcome: "restart the gateway" without "it ran, exit 0". Here the episode is
split into messages, the message holding the most of the query's tokens is the match, and
the outcome is how that exchange ended: the last tool result and the last assistant reply
before the next user message. Both the recall hits (core/memory/scoring.py, the dense
tier) and the per-turn context block (core/context/block.py) use it.

Everything here is linear in the text: an episode's text is bounded at ingest, but a
remembered note or a raw file's lines can be long.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

# A message of an episode's text starts with its role (``tool Bash (error):``,
# ``assistant → Edit:``); lines after it up to the next such line belong to it (a tool's
# output runs over several). The roles are the ones the ingest formats write.
_ROLE_RE = re.compile(r"^(?:user|assistant|system|developer|tool|human|model)\b[^:\n]{0,80}:", re.I)
_USER_RE = re.compile(r"^(?:user|human)\b[^:\n]{0,80}:", re.I)
_REPLY_RE = re.compile(r"^(?:assistant|model)\s*:", re.I)  # a reply, not a tool call (``assistant → X:``)
_RESULT_RE = re.compile(r"^tool\b[^:\n]{0,80}:", re.I)
WIDTH = 240  # characters of a recall hit's snippet
MATCH_SHARE = 0.55  # of a snippet's width the matched message may take when an outcome follows
GAP = " … "


@dataclass(frozen=True)
class Part:
    """One piece of a snippet: a message (or the window of it that matched)."""

    text: str
    role: str  # match | result | reply | context


def messages(text: str) -> list[str]:
    """The episode's text as messages: a line that starts with a role opens one; the
    lines after it (a tool's output) join it with a space. Without roles, each line."""
    out: list[str] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        if out and not _ROLE_RE.match(line) and _ROLE_RE.match(out[-1]):
            out[-1] += " " + line
        else:
            out.append(line)
    return out


def _matches(low: str, tokens: Sequence[str]) -> int:
    return sum(1 for t in tokens if t and t in low)


def best_message(msgs: Sequence[str], tokens: Sequence[str]) -> int:
    """Index of the message holding the most distinct query tokens (ties: a message
    with a role before a header line such as the summary, then the earliest); -1 when
    none holds any."""
    toks = [t.lower() for t in dict.fromkeys(tokens) if t]
    best, best_key = -1, (0, False)
    for i, m in enumerate(msgs):
        n = _matches(m.lower(), toks)
        if not n:
            continue
        key = (n, bool(_ROLE_RE.match(m)))
        if key > best_key:
            best, best_key = i, key
    return best


def outcome_of(msgs: Sequence[str], at: int) -> list[tuple[int, str]]:
    """How the exchange holding message ``at`` ended: the last tool result and the last
    assistant reply after it, before the next user message (index, role), in order."""
    result = reply = None
    for j in range(at + 1, len(msgs)):
        m = msgs[j]
        if _USER_RE.match(m):
            break
        if _RESULT_RE.match(m):
            result = j
        elif _REPLY_RE.match(m):
            reply = j
    return sorted([(j, "result") for j in (result,) if j is not None] +
                  [(j, "reply") for j in (reply,) if j is not None])


def _head(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)].rstrip() + "…"


def _window(text: str, tokens: Iterable[str], width: int) -> str:
    from core.memory.text import snippet as window

    return window(text, tokens, width)


def parts(text: str, tokens: Sequence[str], width: int = WIDTH) -> list[Part]:
    """The match and its outcome, within ``width`` characters in all (the separators
    between parts not counted). A text that fits whole is returned whole, message by message."""
    msgs = messages(text)
    if not msgs:
        return []
    if sum(len(m) for m in msgs) + len(msgs) - 1 <= width:
        return [Part(m, "context") for m in msgs]
    at = best_message(msgs, tokens)
    if at < 0:  # no word in common (a memory of the day a message names): what was asked, and how it ended
        at = next((i for i, m in enumerate(msgs) if _USER_RE.match(m)), -1)
        if at < 0:
            return [Part(_window(" ".join(msgs), tokens, width), "match")]
    follow = outcome_of(msgs, at)
    if not follow:
        return [Part(_window(msgs[at], tokens, width), "match")]
    match_room = max(40, int(width * MATCH_SHARE)) if len(msgs[at]) > width * MATCH_SHARE else len(msgs[at])
    left = max(0, width - match_room)
    # the reply says how it ended in words; the tool result holds the numbers: the reply
    # first when only one fits, each at least a readable line
    chosen: list[tuple[int, str, str]] = []
    by_role = {role: j for j, role in follow}
    order = [r for r in ("reply", "result") if r in by_role]
    share = left // len(order) if order else 0
    if len(order) == 2 and share < 60:
        # one fits: the reply, unless only the tool's result holds the figures ("抓取了 137 个")
        digits = {r: any(ch.isdigit() for ch in msgs[by_role[r]]) for r in order}
        keep = "result" if digits["result"] and not digits["reply"] else "reply"
        order, share = [keep], left
    for role in order:
        j = by_role[role]
        chosen.append((j, role, _head(msgs[j], share)))
    spare = left - sum(len(t) for _j, _r, t in chosen)
    match = _window(msgs[at], tokens, match_room + max(0, spare))
    return [Part(match, "match")] + [Part(t, role) for _j, role, t in sorted(chosen)]


def snippet(text: str, tokens: Sequence[str], width: int = WIDTH) -> str:
    """``parts`` on one line: what a recall hit shows (a text that fits whole, as it reads)."""
    got = parts(text, tokens, width)
    if all(p.role == "context" for p in got):
        return " ".join(p.text for p in got)
    # a window cut short ends in "…" already: the gap says it once
    return GAP.join([p.text.rstrip("…").rstrip() for p in got[:-1]] + [got[-1].text])
