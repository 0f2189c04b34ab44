"""The first-principles checker (SOUL.md): four rules, each with a verdict and
the evidence (the offending span).

The term lists live in SOUL.md so a person tunes them there; the file is read
at run time (``ARS_SOUL_PATH``, else the SOUL.md of this installation, else
the working directory) and re-read when it changes.

* rule 1 拆解到底 decompose: no vague certainty term ("显然", "obviously", ...);
* rule 2 怀疑一切 doubt: a premise or assumption is stated;
* rule 3 重建路径 rebuild: a conclusion has a premise in its sentence or before it;
* rule 4 拒绝跳步 no skipped steps: no skip marker, no "所以显然", no citation
  of an id that does not exist.

``check_text`` checks free text (``ars check``); ``check_premise``,
``check_hypothesis`` and ``check_decision`` check the loop's structured
reasoning, where a declared source or a cited id stands in for a marker.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from core.errors import BadQuery
from core.loop.models import CheckResult, Evidence, Hypothesis, Premise, ProposedAction, RuleVerdict

RULES = ("decompose", "doubt", "rebuild", "no_skip")
LIST_SECTIONS = {
    "vague": "Vague certainty terms",
    "premise": "Premise markers",
    "conclusion": "Conclusion markers",
    "skip": "Skipped-step markers",
}
OPEN_QUOTES = "“\"'‘「『《"
CLOSE_QUOTES = "”\"'’」』》"
SENTENCE_END = re.compile(r"[。！？!?；;\n]+|\.(?=\s|$)")
CLAUSE_START = re.compile(r"(?:^|[,.;:!?，。；：！？\n—-])\s*(?:and\s+)?$", re.IGNORECASE)
NOT_CONCLUSION_AFTER_SO = re.compile(r"\s+(?:that|far|much|many|long|as|to|called)\b", re.IGNORECASE)
JUMP_WINDOW = 12  # characters between a conclusion marker and a vague term that make a jump


class SoulError(BadQuery):
    """SOUL.md cannot be found or lacks a section the checker needs."""


def _has_cjk(s: str) -> bool:
    return any(ord(c) > 0x2E7F for c in s)


@dataclass
class Term:
    text: str
    pattern: re.Pattern
    clause_initial: bool = False  # short English conclusion markers ("so")


@dataclass
class Soul:
    path: str
    titles: dict[str, str]
    lists: dict[str, list[Term]] = field(default_factory=dict)


def _compile(term: str, *, conclusion: bool = False) -> Term:
    if _has_cjk(term):
        return Term(term, re.compile(re.escape(term)))
    words = [re.escape(w) for w in term.split()]
    pat = r"(?<![A-Za-z0-9])" + r"\s+".join(words) + r"(?![A-Za-z0-9])"
    return Term(term, re.compile(pat, re.IGNORECASE), clause_initial=conclusion and len(term) <= 2)


def soul_path() -> Path:
    env = os.environ.get("ARS_SOUL_PATH")
    if env:
        p = Path(env).expanduser()
        if not p.is_file():
            raise SoulError(f"ARS_SOUL_PATH={env} is not a file: point it at a SOUL.md or unset it")
        return p
    here = Path(__file__).resolve()
    for candidate in (here.parents[2] / "SOUL.md", Path.cwd() / "SOUL.md"):
        if candidate.is_file():
            return candidate
    raise SoulError("SOUL.md not found next to the ARS installation or in the working directory: "
                    "set ARS_SOUL_PATH to its path")


def parse_soul(text: str, path: str = "SOUL.md") -> Soul:
    sections: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        m = re.match(r"^##\s+(.+?)\s*$", line)
        if m:
            current = m.group(1)
            sections[current] = []
            r = re.match(r"^(\d)\.\s*(.+)$", current)
            if r and 1 <= int(r.group(1)) <= 4:
                titles[RULES[int(r.group(1)) - 1]] = r.group(2).strip()
            continue
        b = re.match(r"^\s*[-*]\s+(.+?)\s*$", line)
        if b and current is not None:
            sections[current].append(b.group(1))
    soul = Soul(path=path, titles={r: titles.get(r, r) for r in RULES})
    for key, heading in LIST_SECTIONS.items():
        body = next((v for k, v in sections.items() if k.lower().startswith(heading.lower())), None)
        if not body:
            raise SoulError(f"{path}: section '## {heading}' is missing or empty: add it with one term per bullet")
        soul.lists[key] = [_compile(t, conclusion=(key == "conclusion")) for t in body]
    return soul


_cache: dict[str, tuple[tuple[int, int], Soul]] = {}
_lock = threading.Lock()


def load_soul(path: Path | None = None) -> Soul:
    """The parsed SOUL.md, re-read when the file changes."""
    p = Path(path) if path else soul_path()
    st = p.stat()
    key = (st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _cache.get(str(p))
        if hit and hit[0] == key:
            return hit[1]
    soul = parse_soul(p.read_text(encoding="utf-8"), str(p))
    with _lock:
        _cache[str(p)] = (key, soul)
    return soul


# -- matching -----------------------------------------------------------------------
@dataclass
class Match:
    term: str
    start: int
    end: int


def _is_mention(text: str, start: int, end: int) -> bool:
    """“显然” quoted on its own is talked about, not used."""
    return start > 0 and end < len(text) and text[start - 1] in OPEN_QUOTES and text[end] in CLOSE_QUOTES


def find(text: str, terms: Iterable[Term], *, mentions: bool = False) -> list[Match]:
    out: list[Match] = []
    for t in terms:
        for m in t.pattern.finditer(text):
            if not mentions and _is_mention(text, m.start(), m.end()):
                continue
            if t.clause_initial:
                if not CLAUSE_START.search(text[: m.start()]):
                    continue
                if NOT_CONCLUSION_AFTER_SO.match(text, m.end()):
                    continue
            out.append(Match(t.text, m.start(), m.end()))
    out.sort(key=lambda m: (m.start, -(m.end - m.start)))
    # drop matches inside a longer one ("it follows that" vs "it follows trivially" overlap)
    kept: list[Match] = []
    for m in out:
        if kept and m.start < kept[-1].end:
            continue
        kept.append(m)
    return kept


def sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in SENTENCE_END.finditer(text):
        if m.end() > start:
            spans.append((start, m.end()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [s for s in spans if text[s[0]:s[1]].strip()]


def _ev(text: str, m: Match) -> Evidence:
    return Evidence(text=text[m.start:m.end], start=m.start, end=m.end, term=m.term)


def _span(text: str, start: int, end: int, term: str = "") -> Evidence:
    return Evidence(text=text[start:end].strip(), start=start, end=end, term=term)


# -- the four rules on text ------------------------------------------------------------
def _rule1(soul: Soul, text: str) -> RuleVerdict:
    hits = find(text, soul.lists["vague"])
    if hits:
        terms = ", ".join(dict.fromkeys(f"“{h.term}”" for h in hits))
        return RuleVerdict(rule="decompose", title=soul.titles["decompose"], verdict="fail",
                           reason=f"leans on vague certainty ({terms}) instead of facts broken down to atoms.",
                           evidence=[_ev(text, h) for h in hits])
    return RuleVerdict(rule="decompose", title=soul.titles["decompose"], verdict="pass",
                       reason="no vague certainty term.")


def _rule2_text(soul: Soul, text: str, premises: list[Match]) -> RuleVerdict:
    if premises:
        return RuleVerdict(rule="doubt", title=soul.titles["doubt"], verdict="pass",
                           reason=f"states its premise (“{premises[0].term}”).",
                           evidence=[_ev(text, premises[0])])
    first = sentences(text)[:1] or [(0, len(text))]
    return RuleVerdict(rule="doubt", title=soul.titles["doubt"], verdict="fail",
                       reason="no stated premise or assumption: say what was observed, recalled or assumed.",
                       evidence=[_span(text, *first[0])])


def _rule3_text(soul: Soul, text: str, premises: list[Match], conclusions: list[Match]) -> RuleVerdict:
    if not conclusions:
        return RuleVerdict(rule="rebuild", title=soul.titles["rebuild"], verdict="pass",
                           reason="draws no conclusion to trace.")
    bad: list[Evidence] = []
    for s, e in sentences(text):
        concl = [c for c in conclusions if s <= c.start < e]
        if not concl:
            continue
        if any(p.start < e for p in premises):  # a premise in this sentence or an earlier one
            continue
        bad.append(_span(text, concl[0].start, e, concl[0].term))
    if bad:
        return RuleVerdict(rule="rebuild", title=soul.titles["rebuild"], verdict="fail",
                           reason="a conclusion cites no premise or observation.", evidence=bad)
    return RuleVerdict(rule="rebuild", title=soul.titles["rebuild"], verdict="pass",
                       reason="every conclusion follows a stated premise.")


def _jumps(soul: Soul, text: str, conclusions: list[Match]) -> list[Evidence]:
    bad = [_ev(text, m) for m in find(text, soul.lists["skip"])]
    vague = find(text, soul.lists["vague"])
    for c in conclusions:
        for v in vague:
            gap = text[c.end:v.start]
            if 0 <= v.start - c.end <= JUMP_WINDOW and not re.search(r"[，,。.;；:：!?！？]", gap):
                bad.append(_span(text, c.start, v.end, f"{c.term} … {v.term}"))
    return bad


def _rule4(soul: Soul, text: str, conclusions: list[Match], extra: Sequence[Evidence] = ()) -> RuleVerdict:
    bad = _jumps(soul, text, conclusions) + list(extra)
    if bad:
        return RuleVerdict(rule="no_skip", title=soul.titles["no_skip"], verdict="fail",
                           reason="a step jumps from premise to conclusion without the steps between.",
                           evidence=bad)
    return RuleVerdict(rule="no_skip", title=soul.titles["no_skip"], verdict="pass", reason="no skipped step.")


def _result(subject: str, text: str, soul: Soul, verdicts: list[RuleVerdict]) -> CheckResult:
    return CheckResult(subject=subject, text=text, passed=all(v.verdict == "pass" for v in verdicts),
                       verdicts=verdicts, soul=soul.path)


def check_text(text: str, soul: Soul | None = None, subject: str = "text") -> CheckResult:
    """Check free reasoning text (English, Chinese or both)."""
    soul = soul or load_soul()
    premises = find(text, soul.lists["premise"])
    conclusions = find(text, soul.lists["conclusion"])
    return _result(subject, text, soul, [
        _rule1(soul, text),
        _rule2_text(soul, text, premises),
        _rule3_text(soul, text, premises, conclusions),
        _rule4(soul, text, conclusions),
    ])


# -- the loop's structured reasoning -----------------------------------------------------
def check_premise(p: Premise, soul: Soul | None = None) -> CheckResult:
    soul = soul or load_soul()
    text = p.text
    conclusions = find(text, soul.lists["conclusion"])
    doubt = RuleVerdict(rule="doubt", title=soul.titles["doubt"], verdict="pass",
                        reason=f"its source is stated: {p.source}" + (f" ({p.ref})" if p.ref else "") + ".")
    # a premise is the start of a path: its declared source is what a conclusion in it rests on
    rebuild = RuleVerdict(rule="rebuild", title=soul.titles["rebuild"], verdict="pass",
                          reason="a premise rests on its stated source.")
    return _result(f"premise {p.id}", text, soul, [_rule1(soul, text), doubt, rebuild,
                                                    _rule4(soul, text, conclusions)])


def _cited(subject: str, text: str, because: Sequence[str], known: set[str], soul: Soul,
           what: str) -> list[RuleVerdict]:
    premises = find(text, soul.lists["premise"])
    conclusions = find(text, soul.lists["conclusion"])
    valid = [c for c in because if c in known]
    unknown = [c for c in because if c not in known]
    if valid or premises:
        doubt = RuleVerdict(rule="doubt", title=soul.titles["doubt"], verdict="pass",
                            reason=(f"rests on {', '.join(valid)}." if valid
                                    else f"states its premise (“{premises[0].term}”)."))
    else:
        doubt = RuleVerdict(rule="doubt", title=soul.titles["doubt"], verdict="fail",
                            reason=f"the {what} names no premise it rests on: cite premise ids or say what is assumed.",
                            evidence=[_span(text, 0, len(text))] if text.strip() else [Evidence(text="(empty)")])
    if valid or premises:
        rebuild = _rule3_text(soul, text, premises, conclusions) if not valid else RuleVerdict(
            rule="rebuild", title=soul.titles["rebuild"], verdict="pass",
            reason=f"traceable to {', '.join(valid)}.")
    else:
        rebuild = RuleVerdict(rule="rebuild", title=soul.titles["rebuild"], verdict="fail",
                              reason=f"the {what} cites no premise or observation.",
                              evidence=[_span(text, 0, len(text))] if text.strip() else [Evidence(text="(empty)")])
    extra = [Evidence(text=c, term="unknown id") for c in unknown]
    skip = _rule4(soul, text, conclusions, extra)
    if unknown and skip.verdict == "fail":
        skip.reason = (f"cites {', '.join(unknown)}, which is not a stated premise or hypothesis: a step from nowhere."
                       if len(extra) == len(skip.evidence) else skip.reason)
    return [_rule1(soul, text), doubt, rebuild, skip]


def check_hypothesis(h: Hypothesis, premise_ids: Iterable[str], soul: Soul | None = None) -> CheckResult:
    soul = soul or load_soul()
    return _result(f"hypothesis {h.id}", h.text, soul,
                   _cited(f"hypothesis {h.id}", h.text, h.because, set(premise_ids), soul, "hypothesis"))


def check_decision(action: ProposedAction, known_ids: Iterable[str], soul: Soul | None = None) -> CheckResult:
    soul = soul or load_soul()
    text = action.rationale or action.description
    return _result("decision", text, soul,
                   _cited("decision", text, action.because, set(known_ids), soul, "decision"))


def check_orientation(premises: Sequence[Premise], hypotheses: Sequence[Hypothesis],
                      soul: Soul | None = None) -> list[CheckResult]:
    soul = soul or load_soul()
    ids = [p.id for p in premises]
    return [check_premise(p, soul) for p in premises] + [check_hypothesis(h, ids, soul) for h in hypotheses]
