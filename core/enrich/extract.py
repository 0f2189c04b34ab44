"""Deterministic enrichment: summary, topics, typed entities, relations.

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

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.models import Entity, Episode, Relation
from core.memory.text import CJK_STOP_CHARS

SUMMARY_CHARS = 160
TITLED_SUMMARY_CHARS = 220
MAX_TOPICS = 8
MAX_PER_TYPE = {"file": 30, "endpoint": 15, "command": 20, "tool": 25, "technology": 12}
MAX_ENTITIES = 80
MAX_RELATIONS = 60
TOPIC_SCAN_CHARS = 60_000  # topic counting looks at this much text at most
SCAN_CHARS = 100_000  # name and word scanning too

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"

# -- technologies: unambiguous names match in any case; words that are also
# common English ("Rust", "React") only in their proper case. -----------------
_TECH = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "node.js": "Node.js",
    "nodejs": "Node.js", "deno": "Deno", "golang": "Go", "kotlin": "Kotlin", "php": "PHP",
    "docker": "Docker", "docker compose": "Docker Compose", "kubernetes": "Kubernetes", "k8s": "Kubernetes",
    "helm": "Helm", "terraform": "Terraform", "ansible": "Ansible", "nginx": "nginx", "linux": "Linux",
    "macos": "macOS", "ubuntu": "Ubuntu", "debian": "Debian", "postgres": "PostgreSQL",
    "postgresql": "PostgreSQL", "mysql": "MySQL", "sqlite": "SQLite", "fts5": "FTS5", "redis": "Redis",
    "mongodb": "MongoDB", "elasticsearch": "Elasticsearch", "opensearch": "OpenSearch", "neo4j": "Neo4j",
    "cypher": "Cypher", "lucene": "Lucene", "kafka": "Kafka", "rabbitmq": "RabbitMQ", "graphql": "GraphQL",
    "grpc": "gRPC", "fastapi": "FastAPI", "django": "Django", "pydantic": "pydantic", "pytest": "pytest",
    "numpy": "NumPy", "pandas": "pandas", "pytorch": "PyTorch", "tensorflow": "TensorFlow",
    "next.js": "Next.js", "vue.js": "Vue", "svelte": "Svelte", "tailwind": "Tailwind", "vite": "Vite",
    "webpack": "webpack", "npm": "npm", "git": "git", "github": "GitHub", "gitlab": "GitLab", "aws": "AWS",
    "gcp": "GCP", "azure": "Azure", "openai": "OpenAI", "anthropic": "Anthropic", "ollama": "Ollama",
    "vllm": "vLLM", "llama.cpp": "llama.cpp", "textual": "Textual", "typer": "Typer", "jsonl": "JSONL",
    "yaml": "YAML", "tmux": "tmux", "neovim": "Neovim", "vscode": "VS Code", "jupyter": "Jupyter",
    "openclaw": "OpenClaw", "claude code": "Claude Code", "ripgrep": "ripgrep", "systemd": "systemd",
    "websocket": "WebSocket", "oauth": "OAuth", "mcp": "MCP",
}
_TECH_CASED = {"Rust": "Rust", "React": "React", "Java": "Java", "Flask": "Flask", "Swift": "Swift",
               "Ruby": "Ruby", "Go": None}  # None: too ambiguous even in proper case
_CHANNELS = {"telegram": "Telegram", "discord": "Discord", "slack": "Slack", "whatsapp": "WhatsApp",
             "feishu": "Feishu", "imessage": "iMessage", "wechat": "WeChat", "webchat": "webchat"}


# Names are found by one word scan and dictionary look-ups (a regex
# alternation of every name is several times slower). A word here may hold
# one dot (``node.js``); words inside paths and URLs do not count.
_NAME_RE = re.compile(r"(?<![\w/.\\@:-])(?<!→ )[A-Za-z][A-Za-z0-9+]*(?:\.[A-Za-z]+)?(?![\w/@=-]|\.\w)")
_TECH_BIGRAMS = {k for k in _TECH if " " in k}

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
_FENCE_RE = re.compile(r"```(?:bash|sh|shell|zsh|console|terminal)[^\n]*\n(.*?)```", re.S | re.I)
_PROMPT_RE = re.compile(r"^\s*\$ (.+)$", re.M)
_CJK_RUN_RE = re.compile(f"[{_CJK}]{{2,}}")
_SPACE_RE = re.compile(r"\s+")
_ROLE_PREFIX_RE = re.compile(r"^\s*(?:user|assistant|tool|system|[\w-]+ →[^:]*):\s*", re.I)
_HOME_RE = re.compile(r"^/(?:Users|home)/[^/]+(?=/)")

# Program names that say little without their sub-command, and interpreters
# whose script is the interesting part.
_MULTI = {
    "git", "docker", "docker-compose", "npm", "pnpm", "yarn", "pip", "pip3", "cargo", "kubectl", "make",
    "uv", "go", "systemctl", "openclaw", "hermes", "ars", "brew", "apt", "apt-get", "gh", "poetry", "conda",
    "helm", "terraform", "gcloud", "aws", "az", "claude", "ollama", "just", "bundle", "rails", "dotnet",
}
_INTERP = {"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun", "npx", "uvx"}
_WRAPPERS = {"sudo", "env", "time", "nohup", "exec", "command", "nice"}
_TRIVIAL = {"cd", "echo", "printf", "export", "true", "false", "set", "source", ".", "exit", "sleep",
            "unset", "pwd", "clear", "then", "fi", "do", "done", "else", "for", "while", "if", "{", "}"}
_PROG_RE = re.compile(r"^[\w.+-]+$")
_ASSIGN_RE = re.compile(r"^[A-Za-z_]\w*=")
_CMD_SPLIT_RE = re.compile(r"&&|\|\||[;|\n]")

# Tool-call argument keys that carry paths, shell lines or URLs.
FILE_KEYS = ("file_path", "path", "filePath", "file", "notebook_path", "filename", "target_file")
COMMAND_KEYS = ("command", "cmd")
URL_KEYS = ("url", "uri", "href")

_STOP = frozenset(
    """able about above after again against all almost also although always among another answer anyone
    anything around asked assistant available back based been before being below best better between both
    call called calls came cannot case cause change check content contents could current data default
    description details different does doing done down during each either else enough even every example
    exactly false file files first following found from full further gets getting give given going gone good
    great have having help here hers into itself just keep know known last later least less lets like line
    lines little look looks made make makes making many maybe means might more most much must name need needs
    never next none note nothing null only other others ours output over part please point possible pretty
    probably quite rather read really result results right said same says second seems seen should show shows
    since some something sometimes soon still such sure take tell text than thank thanks that thats their theirs
    them then there therefore these they thing things think this those though through thus time today together
    tool tools true type under unless until upon used user uses using very want wants well were what whatever
    when where whether which while whom whose will with within without work would wrote write writes yeah year
    years your yours yourself http https www html json none assistant toolresult tool_result tool_use title url
    links link search results source sources summary""".split()
)


@dataclass
class Hints:
    """Facts a parser knows from the format itself."""

    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # shell lines run outside tool calls
    people: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # the user's messages, noise removed, in order
    title: str = ""
    cwd: str = ""

    def merge(self, other: "Hints") -> None:
        for name in ("tool_calls", "commands", "people", "agents", "channels", "projects", "requests"):
            getattr(self, name).extend(getattr(other, name))
        self.title = self.title or other.title
        self.cwd = self.cwd or other.cwd


@dataclass
class Extraction:
    summary: str
    topics: list[str]
    entities: list[Entity]
    relations: list[Relation]


# -- helpers ----------------------------------------------------------------------
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
    if p.lower() in _TECH or p.lower() in _NOT_FILES or len(p) > 300:
        return False
    parts = [x for x in p.split("/") if x not in ("", "~", ".", "..")]
    if not parts or not any(ch.isalpha() for ch in p):
        return False
    if "/" in p and not p.startswith(("/", "~", ".")) and not re.search(rf"\.(?:{_FILE_EXT})$", p):
        return False
    if p.startswith("/") and len(parts) < 2:
        return False
    return True


def command_names(cmdline: str, limit: int = 5) -> list[str]:
    """Canonical names of the programs a shell line runs: ``git push``,
    ``python3 publish.py``, ``pytest``; trivial builtins are left out."""
    out: list[str] = []
    for segment in _CMD_SPLIT_RE.split(cmdline[:4000]):
        tokens = segment.strip().split()
        while tokens and (tokens[0] in _WRAPPERS or _ASSIGN_RE.match(tokens[0])):
            tokens.pop(0)
        if not tokens:
            continue
        prog = os.path.basename(tokens[0].strip("'\"()"))
        if not prog or prog in _TRIVIAL or prog.startswith("-") or not _PROG_RE.match(prog) or prog.isdigit():
            continue
        rest = [t for t in tokens[1:] if not t.startswith("-")]
        name = prog
        if prog in _MULTI and rest and _PROG_RE.match(rest[0]):
            name = f"{prog} {rest[0]}"
        elif prog in _INTERP:
            if len(tokens) > 2 and tokens[1] == "-m":
                name = f"{prog} -m {tokens[2]}"
            elif len(tokens) > 1 and not tokens[1].startswith("-"):
                script = os.path.basename(tokens[1].strip("'\""))
                if _PROG_RE.match(script):
                    name = f"{prog} {script}"
        if name not in out:
            out.append(name)
        if len(out) >= limit:
            break
    return out


def shell_lines(text: str) -> list[str]:
    """Shell lines written in the text: fenced bash/sh blocks and ``$ `` prompts."""
    lines: list[str] = []
    if "```" in text:
        for block in _FENCE_RE.findall(text):
            lines.extend(ln.strip() for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))
    if "$ " in text:
        lines.extend(m.strip() for m in _PROMPT_RE.findall(text))
    return lines[:50]


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
        col.add(_CHANNELS.get(c.lower(), c), "channel")
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


def scan_words(text: str) -> tuple[list[str], list[str], Counter]:
    """One pass over the words: (technologies, channels) named, in
    first-seen order, and the counts of candidate topic words (letters only,
    lowercase or capitalised, not a stop word, not inside a path or URL)."""
    techs: list[str] = []
    channels: list[str] = []
    words: Counter = Counter()
    # Count first (in C), then look at each distinct word once; a Counter
    # keeps first-seen order.
    for word, n in Counter(_NAME_RE.findall(text)).items():
        low = word.lower()
        t = _TECH.get(low) or _TECH_CASED.get(word)
        if t and t not in techs:
            techs.append(t)
        c = _CHANNELS.get(low)
        if c and c not in channels:
            channels.append(c)
        if 4 <= len(low) <= 21 and low.isalpha() and low not in _STOP and word[1:].islower():
            words[low] += n
    if _TECH_BIGRAMS:
        low_text = text.lower()
        for key in _TECH_BIGRAMS:
            if key in low_text and _TECH[key] not in techs:
                techs.append(_TECH[key])
    return techs, channels, words


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


def topics_of(text: str, hints: Hints | None = None, techs: list[str] | None = None,
              words: Counter | None = None) -> list[str]:
    """Technologies first, then the words (and CJK bigrams) the episode
    repeats most; the user's own words count three times."""
    h = hints or Hints()
    sample = text[:TOPIC_SCAN_CHARS]
    counts: Counter = Counter(words) if words is not None else scan_words(sample)[2]
    for r in h.requests[:20]:
        counts.update({w: 2 * n for w, n in scan_words(r[:2000])[2].items()})
    for run in _CJK_RUN_RE.findall(sample):
        for i in range(len(run) - 1):
            bg = run[i : i + 2]
            if bg[0] not in CJK_STOP_CHARS and bg[1] not in CJK_STOP_CHARS:
                counts[bg] += 1
    out = [t.lower() for t in (techs or [])][:4]
    for word, n in counts.most_common(MAX_TOPICS * 3):
        if len(out) >= MAX_TOPICS:
            break
        if n >= 2 and word not in out:
            out.append(word)
    return out


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
