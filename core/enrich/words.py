"""The words of a text: the technologies and channels it names, and the topics it
repeats (words and CJK bigrams), found in one scan with dictionary look-ups."""

from __future__ import annotations

import re
from collections import Counter

from core.enrich.hints import Hints
from core.memory.text import CJK_STOP_CHARS

MAX_TOPICS = 8
TOPIC_SCAN_CHARS = 60_000  # topic counting looks at this much text at most

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"

# -- technologies: unambiguous names match in any case; words that are also
# common English ("Rust", "React") only in their proper case. -----------------
TECHNOLOGIES = {
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
CHANNELS = {"telegram": "Telegram", "discord": "Discord", "slack": "Slack", "whatsapp": "WhatsApp",
             "feishu": "Feishu", "imessage": "iMessage", "wechat": "WeChat", "webchat": "webchat"}


# Names are found by one word scan and dictionary look-ups (a regex
# alternation of every name is several times slower). A word here may hold
# one dot (``node.js``); words inside paths and URLs do not count.
_NAME_RE = re.compile(r"(?<![\w/.\\@:-])(?<!→ )[A-Za-z][A-Za-z0-9+]*(?:\.[A-Za-z]+)?(?![\w/@=-]|\.\w)")
_TECH_BIGRAMS = {k for k in TECHNOLOGIES if " " in k}
_CJK_RUN_RE = re.compile(f"[{_CJK}]{{2,}}")

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
        t = TECHNOLOGIES.get(low) or _TECH_CASED.get(word)
        if t and t not in techs:
            techs.append(t)
        c = CHANNELS.get(low)
        if c and c not in channels:
            channels.append(c)
        if 4 <= len(low) <= 21 and low.isalpha() and low not in _STOP and word[1:].islower():
            words[low] += n
    if _TECH_BIGRAMS:
        low_text = text.lower()
        for key in _TECH_BIGRAMS:
            if key in low_text and TECHNOLOGIES[key] not in techs:
                techs.append(TECHNOLOGIES[key])
    return techs, channels, words


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
