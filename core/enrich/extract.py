"""Deterministic enrichment: summary, topics, typed entities, relations.

This module holds the extractor (entities and relations) and applies it to an
episode; ``summary``, ``words`` (technologies, channels, topics) and ``commands``
(shell lines) are its parts, ``hints`` what a parser tells it.

Runs on every parsed episode, so it is regex-only and linear in the text.
Two inputs:

* the episode text (what any episode has): URLs become ``endpoint``s, paths
  ``file``s, shell lines in fenced ``bash``/``sh`` blocks or ``$ `` prompts
  ``command``s, names from a small list ``technology``s;
* ``Hints`` (what a parser knows for sure): the tool calls with their
  arguments (``tool``, and the ``file``/``command``/``endpoint`` they name),
  people, agents, channels and projects named by the format, the user's
  requests in order and a session title.

Relations: ``(agent) -uses-> (tool)``, ``(agent) -runs-> (command)``,
``(tool) -touches-> (file)``, ``(command) -touches-> (file)``,
``(tool) -fetches-> (endpoint)``, ``(person) -asks-> (agent)``,
``(agent) -works_on-> (project)``. Their ends are entity names, so the graph
links them to the episode's entities.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from core.enrich.commands import command_names, shell_lines
from core.enrich.hints import Hints
from core.enrich.summary import summarize
from core.enrich.words import CHANNELS, TECHNOLOGIES, scan_words, topics_of
from core.models import Entity, Episode, Relation

MAX_PER_TYPE = {"file": 30, "endpoint": 15, "command": 20, "tool": 25, "technology": 12}
MAX_ENTITIES = 80
MAX_RELATIONS = 60
SCAN_CHARS = 100_000  # name and word scanning too

# -- URLs, paths, shell lines ---------------------------------------------------
_URL_RE = re.compile(r"\bhttps?://[^\s<>\"'`()\[\]{}|\\^…]+", re.I)
_FILE_EXT = (
    "py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|mdx|txt|rst|yaml|yml|toml|ini|cfg|conf|env|sh|bash|zsh|"
    "fish|ps1|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|sql|html|htm|css|scss|tcss|csv|tsv|xml|lock|log|"
    "pdf|png|jpg|jpeg|gif|svg|webp|mp3|wav|mp4|zip|gz|tgz|whl|db|sqlite|parquet|pem|service|tf|proto|vue|svelte"
)
_SPECIAL_FILES = "Dockerfile|Makefile|Justfile|Procfile|Gemfile|Rakefile|Vagrantfile|LICENSE|README"
_SEG = r"[\w@+.-]+"
_PATH_RE = re.compile(
    rf"(?<![\w/.:@~+-])("
    rf"(?:~|\.\.?)?/(?:{_SEG}/)+{_SEG}"  # absolute or ./ ../ ~/ path with at least two parts
    rf"|(?:{_SEG}/)+{_SEG}\.(?:{_FILE_EXT})"  # relative path ending in a known extension
    rf"|[\w@+-][\w@+.-]*\.(?:{_FILE_EXT})"  # bare file name with a known extension
    rf"|(?:{_SPECIAL_FILES})"
    rf")(?![\w/@+-]|\.\w)"
)
_HOME_RE = re.compile(r"^/(?:Users|home)/[^/]+(?=/)")

# Tool-call argument keys that carry paths, shell lines or URLs.
FILE_KEYS = ("file_path", "path", "filePath", "file", "notebook_path", "filename", "target_file")
COMMAND_KEYS = ("command", "cmd")
URL_KEYS = ("url", "uri", "href")


@dataclass
class Extraction:
    summary: str
    topics: list[str]
    entities: list[Entity]
    relations: list[Relation]


def normalize_url(url: str) -> str:
    u = url.rstrip(".,;:!?)'\"")
    u = u.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    return u[:160]


def normalize_path(path: str, cwd: str = "") -> str:
    p = path.rstrip(".,;:)'\"")
    if cwd and p.startswith(cwd.rstrip("/") + "/"):
        return p[len(cwd.rstrip("/")) + 1 :]
    return _HOME_RE.sub("~", p)


_NOT_FILES = frozenset({"console.log", "console.error", "window.location", "document.cs", "self.log", "logger.log"})


def _plausible_path(p: str) -> bool:
    if p.lower() in TECHNOLOGIES or p.lower() in _NOT_FILES or len(p) > 300:
        return False
    parts = [x for x in p.split("/") if x not in ("", "~", ".", "..")]
    if not parts or not any(ch.isalpha() for ch in p):
        return False
    if "/" in p and not p.startswith(("/", "~", ".")) and not re.search(rf"\.(?:{_FILE_EXT})$", p):
        return False
    if p.startswith("/") and len(parts) < 2:
        return False
    return True


class _Collector:
    """Entities and relations, deduplicated and capped, in first-seen order."""

    def __init__(self) -> None:
        self.entities: list[Entity] = []
        self._seen: set[tuple[str, str]] = set()
        self._names: dict[str, str] = {}  # lower name -> the spelling first kept
        self._per_type: Counter = Counter()
        self.relations: list[Relation] = []
        self._rel_seen: set[tuple[str, str, str]] = set()

    def add(self, name: str, etype: str) -> str | None:
        name = name.strip()
        if not name or len(name) > 300:
            return None
        key = (etype, name.lower())
        if key in self._seen:
            return self._names[name.lower()]
        if len(self.entities) >= MAX_ENTITIES or self._per_type[etype] >= MAX_PER_TYPE.get(etype, 20):
            return None
        self._seen.add(key)
        self._names.setdefault(name.lower(), name)
        self._per_type[etype] += 1
        self.entities.append(Entity(name=name, type=etype))  # type: ignore[arg-type]
        return name

    def relate(self, src: str | None, rel: str, dst: str | None) -> None:
        if not src or not dst or src == dst or len(self.relations) >= MAX_RELATIONS:
            return
        key = (src.lower(), rel, dst.lower())
        if key not in self._rel_seen:
            self._rel_seen.add(key)
            self.relations.append(Relation(src=src, rel=rel, dst=dst))


# -- the extractor -------------------------------------------------------------------
def extract(text: str, hints: Hints | None = None, agent: str = "") -> Extraction:
    """Summary, topics, entities and relations of one episode's text."""
    h = hints or Hints()
    col = _Collector()
    agent_name = col.add(agent, "agent") if agent else None
    for a in h.agents:
        col.add(a, "agent")
    for p in h.people:
        person = col.add(p, "person")
        col.relate(person, "asks", agent_name)
    for c in h.channels:
        col.add(CHANNELS.get(c.lower(), c), "channel")
    for pr in h.projects:
        col.relate(agent_name, "works_on", col.add(pr, "project"))

    # Tool calls: the tool, and the files, commands and URLs its arguments name.
    for name, args in h.tool_calls:
        tool = col.add(name, "tool")
        col.relate(agent_name, "uses", tool)
        if not isinstance(args, dict):
            continue
        for key in FILE_KEYS:
            v = args.get(key)
            if isinstance(v, str) and v.strip() and "\n" not in v:
                col.relate(tool, "touches", col.add(normalize_path(v.strip(), h.cwd), "file"))
        for key in COMMAND_KEYS:
            v = args.get(key)
            if isinstance(v, list):
                v = " ".join(map(str, v))
            if isinstance(v, str) and v.strip():
                _add_command(col, v, agent_name, h.cwd)
        for key in URL_KEYS:
            v = args.get(key)
            if isinstance(v, str) and v.startswith(("http://", "https://")):
                col.relate(tool, "fetches", col.add(normalize_url(v), "endpoint"))
    for cmd in h.commands:
        _add_command(col, cmd, agent_name, h.cwd)
    for line in shell_lines(text):
        _add_command(col, line, agent_name, h.cwd)

    # Free text: URLs, then paths in what is left, then technologies.
    plain = text
    if "://" in text:
        for u in _URL_RE.findall(text):
            col.add(normalize_url(u), "endpoint")
        plain = _URL_RE.sub(" ", text)
    if "/" in plain or "." in plain:
        for m in _PATH_RE.finditer(plain):
            p = m.group(1)
            if _plausible_path(p):
                col.add(normalize_path(p, h.cwd), "file")
    techs, channels, words = scan_words(text[:SCAN_CHARS])
    for t in techs:
        col.add(t, "technology")
    if not h.channels:
        for c in channels:
            col.add(c, "channel")

    return Extraction(
        summary=summarize(text, h),
        topics=topics_of(text, h, techs, words),
        entities=col.entities,
        relations=col.relations,
    )


def _add_command(col: _Collector, cmdline: str, agent_name: str | None, cwd: str) -> None:
    names = [col.add(n, "command") for n in command_names(cmdline)]
    names = [n for n in names if n]
    for n in names:
        col.relate(agent_name, "runs", n)
    plain = _URL_RE.sub(" ", cmdline[:4000]) if "://" in cmdline else cmdline[:4000]
    for m in _PATH_RE.finditer(plain):
        p = m.group(1)
        if _plausible_path(p):
            f = col.add(normalize_path(p, cwd), "file")
            for n in names:
                col.relate(n, "touches", f)


# -- applying it to an episode ------------------------------------------------------------
ENRICHMENT_META = ("enrichment", "enrichment_model", "enrichment_error")


def source_key(ep: Episode) -> str:
    """A fingerprint of what the parser read (ids, text, times, meta), leaving
    out what enrichment writes (summary, topics, entities, relations and the
    enrichment marks). Re-ingesting a file whose episode has the same key can
    keep the stored episode, so an LLM enrichment is not replaced by the
    parser's deterministic one."""
    import hashlib
    import json

    meta = {k: v for k, v in ep.meta.items() if k not in ENRICHMENT_META}
    payload = [ep.id, ep.source, ep.session_id, ep.agent, ep.channel, ep.text,
               ep.first_ts.isoformat() if ep.first_ts else None, ep.last_ts.isoformat() if ep.last_ts else None,
               ep.message_count, meta]
    raw = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()

def enrich_deterministic(ep: Episode, hints: Hints | None = None, *, keep_given: bool = False) -> Episode:
    """The episode with the deterministic extraction applied.

    ``keep_given``: fields the episode already has (a hand-written summary,
    curated entities) are kept and only empty ones are filled.
    """
    ext = extract(ep.text, hints, agent=ep.agent)
    update: dict[str, Any] = {}
    if not (keep_given and ep.summary):
        update["summary"] = ext.summary
    if not (keep_given and ep.topics):
        update["topics"] = ext.topics
    if not (keep_given and ep.entities):
        update["entities"] = ext.entities
        if not (keep_given and ep.relations):
            update["relations"] = ext.relations
    meta = dict(ep.meta)
    if update:
        meta.setdefault("enrichment", "deterministic")
    update["meta"] = meta
    return ep.model_copy(update=update)
