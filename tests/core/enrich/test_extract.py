"""The deterministic extractor: typed entities, relations, topics, summary."""

from __future__ import annotations

from core.enrich.commands import command_names
from core.enrich.extract import MAX_PER_TYPE, enrich_deterministic, extract, normalize_path, normalize_url, source_key
from core.enrich.hints import Hints
from core.models import Episode


def ents(ext) -> set[tuple[str, str]]:
    return {(e.name, e.type) for e in ext.entities}


def test_command_names_are_canonical():
    assert command_names("git push origin main") == ["git push"]
    assert command_names("cd /srv/app && python3 -m pytest -q tests/") == ["python3 -m pytest"]
    assert command_names("sudo FOO=1 docker compose up -d") == ["docker compose"]
    assert command_names("ls -la | grep foo; echo done") == ["ls", "grep"]
    assert command_names("python3 /Users/pete/bin/publish_session.py 0ccf") == ["python3 publish_session.py"]
    assert command_names("/usr/bin/rsync -az a b || true") == ["rsync"]
    assert command_names("") == [] and command_names("   ") == []


def test_paths_urls_and_technologies_in_free_text():
    text = ("Edit core/text.py and ~/notes/todo.md (not https://example.com/a/b.py?x=1#frag, not 2026/01/02, "
            "not node.js the word). The Makefile calls /usr/local/bin/neo4j-admin. We run Node.js and Neo4j; "
            "tests in e2e-tests/conftest.py; and/or 24/7 are not paths.")
    ext = extract(text)
    files = {n for n, t in ents(ext) if t == "file"}
    assert files == {"core/text.py", "~/notes/todo.md", "Makefile", "/usr/local/bin/neo4j-admin",
                     "e2e-tests/conftest.py"}
    assert ("https://example.com/a/b.py", "endpoint") in ents(ext)
    assert {("Node.js", "technology"), ("Neo4j", "technology")} <= ents(ext)


def test_proper_case_only_for_ambiguous_technology_names():
    assert ("React", "technology") in ents(extract("The React app renders twice."))
    assert not any(t == "technology" for _, t in ents(extract("How did they react to the rust on the gate?")))


def test_tool_calls_commands_and_relations():
    hints = Hints(
        tool_calls=[("Bash", {"command": "pytest -q tests/test_text.py && git commit -am fix"}),
                    ("Edit", {"file_path": "/w/proj/core/text.py", "old_string": "a", "new_string": "b"}),
                    ("WebFetch", {"url": "https://docs.python.org/3/library/re.html?highlight=x"})],
        people=["Alice"], projects=["proj"], cwd="/w/proj",
        requests=["ok", "Fix the tokenizer bug in core/text.py please"],
    )
    ext = extract("assistant: working on it", hints, agent="claude-code")
    e = ents(ext)
    assert {("claude-code", "agent"), ("Alice", "person"), ("proj", "project"), ("Bash", "tool"),
            ("Edit", "tool"), ("WebFetch", "tool"), ("pytest", "command"), ("git commit", "command"),
            ("tests/test_text.py", "file"), ("core/text.py", "file"),
            ("https://docs.python.org/3/library/re.html", "endpoint")} <= e
    r = {(x.src, x.rel, x.dst) for x in ext.relations}
    assert {("claude-code", "uses", "Bash"), ("claude-code", "runs", "pytest"),
            ("pytest", "touches", "tests/test_text.py"), ("Edit", "touches", "core/text.py"),
            ("WebFetch", "fetches", "https://docs.python.org/3/library/re.html"),
            ("Alice", "asks", "claude-code"), ("claude-code", "works_on", "proj")} <= r
    # every relation end is an entity of the episode, so the graph can link them
    names = {x.name for x in ext.entities}
    assert all(x.src in names and x.dst in names for x in ext.relations)
    # the summary is the first meaningful request, not "ok"
    assert ext.summary == "Fix the tokenizer bug in core/text.py please"


def test_shell_lines_in_text():
    text = "Run this:\n```bash\n# setup\nuv pip install -e .\nmake test\n```\nthen\n$ docker build -t api ./services/api\n"
    e = ents(extract(text))
    assert {("uv pip", "command"), ("make test", "command"), ("docker build", "command")} <= e


def test_summary_title_truncation_and_cjk():
    long = "Please " + "refactor the ingestion pipeline " * 20
    ext = extract("x", Hints(requests=[long], title="Pipeline refactor"))
    assert ext.summary.startswith("Pipeline refactor — Please refactor the ingestion pipeline")
    assert len(ext.summary) <= 220 and ext.summary.endswith("…")
    zh = extract("user: 帮我检查召回的降级策略，召回失败时要降级到 SQLite。\nassistant: 好的，召回降级已检查。",
                 Hints(requests=["帮我检查召回的降级策略，召回失败时要降级到 SQLite。"]))
    assert zh.summary == "帮我检查召回的降级策略，召回失败时要降级到 SQLite。"
    assert "召回" in zh.topics and "降级" in zh.topics and "sqlite" in zh.topics


def test_without_requests_the_summary_is_the_first_line_someone_said():
    text = "tool Bash: total 48\nassistant: The backup finished with 1,204 files.\nuser: thanks"
    assert extract(text).summary == "The backup finished with 1,204 files."


def test_topics_skip_paths_urls_and_markup_words():
    text = ("user: the deploy of the billing service failed\nassistant → Bash: command=kubectl rollout status "
            "deploy/billing\ntool Bash: waiting for deploy billing rollout\n/private/var/folders/xyz/tmp "
            "https://example.com/folders/private")
    topics = extract(text).topics
    assert "deploy" in topics and "billing" in topics
    assert "folders" not in topics and "private" not in topics and "command" not in topics


def test_caps_and_determinism():
    text = "\n".join(f"see https://site{i}.example.com/page and file{i}.py" for i in range(100))
    a = extract(text)
    assert sum(1 for e in a.entities if e.type == "endpoint") == MAX_PER_TYPE["endpoint"]
    assert sum(1 for e in a.entities if e.type == "file") == MAX_PER_TYPE["file"]
    b = extract(text)
    assert a == b  # same input, same output, same order


def test_normalizers():
    assert normalize_url("https://a.b/c/?q=1#x).") == "https://a.b/c"
    assert normalize_path("/w/proj/a/b.py", "/w/proj") == "a/b.py"
    assert normalize_path("/Users/pete/notes.md") == "~/notes.md"
    assert normalize_path("/home/lin/x/y.txt") == "~/x/y.txt"
    assert normalize_path("/etc/hosts") == "/etc/hosts"


def test_enrich_deterministic_keeps_what_was_given():
    given = Episode(id="m:1", text="We moved the Neo4j sync into core/sync.py", summary="Hand-written summary",
                    entities=[{"name": "Bob", "type": "person"}])
    out = enrich_deterministic(given, keep_given=True)
    assert out.summary == "Hand-written summary" and [e.name for e in out.entities] == ["Bob"]
    assert out.topics and out.meta["enrichment"] == "deterministic"
    fresh = enrich_deterministic(given)
    assert ("core/sync.py", "file") in {(e.name, e.type) for e in fresh.entities}
    assert fresh.summary == "We moved the Neo4j sync into core/sync.py"


def test_source_key_ignores_enrichment_only():
    ep = enrich_deterministic(Episode(id="m:2", text="deploy notes", meta={"path": "/x.md"}))
    llm_like = ep.model_copy(update={"summary": "LLM summary", "topics": ["x"], "entities": [],
                                     "meta": {**ep.meta, "enrichment": "llm", "enrichment_model": "m"}})
    assert source_key(ep) == source_key(llm_like)
    assert source_key(ep) != source_key(ep.model_copy(update={"text": "deploy notes, edited"}))
    assert source_key(ep) != source_key(ep.model_copy(update={"meta": {**ep.meta, "prev": "m:1"}}))
