"""Each transcript format on real files: OpenClaw v3 and Hermes fixtures
written for these tests, Markdown memory files, and the real Claude Code
transcripts in ../shared/data (main sessions and subagent files).

Besides what each parser extracts, every test checks the span contract the
raw-file tier relies on: a line that gave text to an episode maps back to
that episode."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core.ingest.formats.generic import parse_jsonl
from core.ingest.parsers import PARSERS, detect_format
from core.models import Episode
from core.memory.sources import SourceFile

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).parents[2] / "fixtures"
OPENCLAW = FIXTURES / "openclaw" / "agents" / "main" / "sessions" / "5f1c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77.jsonl"
HERMES = FIXTURES / "hermes" / "sessions-export.jsonl"
MD = FIXTURES / "markdown"
CLAUDE = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code"
CC_MAIN = CLAUDE / "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl"
CC_SUB = CLAUDE / "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68" / "subagents" / "agent-a5bdbc1.jsonl"
SID = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"

needs_claude = pytest.mark.skipif(not CLAUDE.is_dir(), reason=f"real transcripts not found at {CLAUDE}")


def parse(path: Path):
    return PARSERS[detect_format(path)](path)


def ents(ep: Episode) -> set[tuple[str, str]]:
    return {(e.name, e.type) for e in ep.entities}


def rels(ep: Episode) -> set[tuple[str, str, str]]:
    return {(r.src, r.rel, r.dst) for r in ep.relations}


def norm(s: str) -> str:
    return " ".join(s.split())


def first_string(value) -> str:
    """The first readable string of a JSON value (a line's visible text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for v in value:
            s = first_string(v)
            if s:
                return s
    if isinstance(value, dict):
        if value.get("type") in ("thinking", "image", "redacted_thinking"):
            return ""
        for key in ("text", "content", "summary", "command"):
            if key in value:
                s = first_string(value[key])
                if s:
                    return s
    return ""


def check_spans(path: Path, parsed, line_text) -> int:
    """Every line whose text made it into an episode maps (through the spans,
    as the raw-file tier maps ripgrep hits) to an episode holding that text.
    Returns how many lines were checked."""
    sf = SourceFile(str(path), "x", list(parsed.spans))
    by_id = {e.id: norm(e.text) for e in parsed.episodes}
    checked = 0
    for no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        snippet = norm(line_text(raw))[:40]
        if len(snippet) < 12:
            continue
        holders = {eid for eid, text in by_id.items() if snippet in text}
        if holders:
            assert sf.episode_at(no) in holders, (no, snippet, sf.episode_at(no), holders)
            checked += 1
    return checked


def jsonl_line_text(raw: str) -> str:
    """The visible text of a message line (other lines, such as Claude Code's
    queue operations that repeat a later message, are not message lines)."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return ""
    if obj.get("type") not in ("user", "assistant", "message") or obj.get("isMeta"):
        return ""
    return first_string(obj.get("message", obj))


# -- OpenClaw -----------------------------------------------------------------------
def test_openclaw_v3_session():
    assert detect_format(OPENCLAW) == "openclaw"
    p = parse(OPENCLAW)
    assert p.malformed == []
    sid = "5f1c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77"
    assert [e.id for e in p.episodes] == [f"openclaw:{sid}:{i}" for i in range(3)]
    first, compacted, next_day = p.episodes
    assert all(e.source == "openclaw" and e.session_id == sid and e.agent == "main" for e in p.episodes)
    # order kept: each part points at the one before (FOLLOWED_BY in the graph)
    assert "prev" not in first.meta
    assert compacted.meta["prev"] == first.id and next_day.meta["prev"] == compacted.id
    assert all(e.meta["path"] == str(OPENCLAW) for e in p.episodes)
    # the compaction opens a new episode with its summary; a day's gap opens another
    assert compacted.text.startswith("compaction summary: Fixed the nightly NAS backup")
    assert next_day.first_ts == datetime(2026, 3, 6, 9, 0, tzinfo=timezone.utc)
    # model_change and the assistant's model are remembered per episode; session_info is the title
    assert first.meta["model"] == "claude-sonnet-4-5" and compacted.meta["model"] == "gpt-4o"
    assert {e.meta["title"] for e in p.episodes} == {"NAS backup repair"}
    # noise and private text are gone: heartbeats, acks, empty messages, thinking, envelopes
    all_text = "\n".join(e.text for e in p.episodes)
    for gone in ("HEARTBEAT", "NO_REPLY", "SECRET-SCRATCHPAD", "untrusted metadata", "message_id",
                 "[[reply_to_current]]", "GMT+8", "iVBORw0KGgo", "thinkingSignature"):
        assert gone not in all_text, gone
    assert first.text.startswith("user: The nightly backup to the NAS failed again.")
    assert first.message_count == 6
    # the envelope named the sender and the platform
    assert ("Lin Wei", "person") in ents(first) and first.channel == "telegram"
    assert ("Lin Wei", "asks", "main") in rels(first)
    # tool calls become typed entities and relations
    assert {("exec", "tool"), ("read", "tool"), ("tail", "command"), ("ssh-keygen", "command"),
            ("/var/log/backup.log", "file"), ("https://docs.example.org/rsync/troubleshooting", "endpoint")
            } <= ents(first)
    assert {("main", "uses", "exec"), ("tail", "touches", "/var/log/backup.log"),
            ("read", "touches", "~/scripts/backup.sh")} <= rels(first)
    assert ("cron", "tool") in ents(compacted)
    assert first.summary == "NAS backup repair — The nightly backup to the NAS failed again. " \
                            "Check /var/log/backup.log and fix the rsync job please."
    assert "rsync" in first.topics and "backup" in first.topics
    assert all(e.meta["enrichment"] == "deterministic" for e in p.episodes)
    # spans: message lines map to their episode; heartbeat/noise lines to none
    assert p.spans == [(4, 9, first.id), (16, 19, compacted.id), (21, 22, next_day.id)]
    sf = SourceFile(str(OPENCLAW), "openclaw", p.spans)
    assert [sf.episode_at(n) for n in (11, 12, 13, 14)] == [None] * 4
    assert check_spans(OPENCLAW, p, jsonl_line_text) >= 7


def test_openclaw_agent_and_session_without_header(tmp_path):
    d = tmp_path / ".openclaw" / "agents" / "coder" / "sessions"
    d.mkdir(parents=True)
    f = d / "abc123.jsonl"
    rows = [
        {"type": "message", "id": "1", "parentId": None, "timestamp": "2026-01-01T10:00:00Z",
         "message": {"role": "user", "content": "Refactor the tokenizer in core/text.py"}},
        {"type": "message", "id": "2", "parentId": "1", "timestamp": "2026-01-01T10:00:05Z",
         "message": {"role": "bashExecution", "command": "pytest -q tests/test_text.py", "output": "3 passed",
                     "exitCode": 0}},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert detect_format(f) == "openclaw"
    p = parse(f)
    (ep,) = p.episodes
    assert ep.id == "openclaw:abc123:0" and ep.agent == "coder"
    assert ("pytest", "command") in ents(ep) and ("core/text.py", "file") in ents(ep)
    assert "3 passed" in ep.text


# -- Claude Code (real transcripts) ------------------------------------------------------
@needs_claude
def test_claude_code_real_main_transcript():
    assert detect_format(CC_MAIN) == "claude-code"
    p = parse(CC_MAIN)
    assert p.malformed == []
    assert len(p.episodes) >= 2
    ids = [e.id for e in p.episodes]
    assert ids == [f"claude-code:{SID}:{i}" for i in range(len(ids))]
    for a, b in zip(p.episodes, p.episodes[1:]):
        assert b.meta["prev"] == a.id and a.last_ts <= b.first_ts
    # the session's summary line (its leafUuid is in this file) is the title
    assert {e.meta.get("title") for e in p.episodes} == {"Spawn curry poem agents, write sushi"}
    first = p.episodes[0]
    assert first.summary.startswith("Spawn curry poem agents, write sushi — Spaw sub-agents to write poems")
    assert first.agent == "claude-code" and first.channel == "cli"
    assert first.meta["cwd"] == "/Users/pete/tmp/claude-code-sessions"
    assert first.meta["model"].startswith("claude-")
    text = "\n".join(e.text for e in p.episodes)
    # noise: meta lines, caveats, empty command output, interruptions, thinking, API errors, snapshots
    for gone in ("<local-command-caveat>", "Caveat: The messages below", "(no content)",
                 "[Request interrupted by user]", "The user wants me to:", "EvsDCkYICxgC", "FailedToOpenSocket",
                 "trackedFileBackups", "Publish the current session transcript by running", "<command-name>"):
        assert gone not in text, gone
    # kept: slash commands as typed, subagent results delivered by task notifications, tool results
    assert "user: /plugin" in text and "user: /publish-session" in text
    assert "Crimson river in a bowl of clay" in text
    assert "Session published (5 subagent transcript(s) included)" in text
    all_ents = set().union(*(ents(e) for e in p.episodes))
    assert {("claude-code", "agent"), ("claude-code-sessions", "project"), ("Task", "tool"), ("Bash", "tool"),
            ("python3 publish_session.py", "command"),
            ("https://gist.github.com/moredip/ddfbe6ef17883b0bd33680fdf5d714af", "endpoint")} <= all_ents
    all_rels = set().union(*(rels(e) for e in p.episodes))
    assert ("claude-code", "runs", "python3 publish_session.py") in all_rels
    assert check_spans(CC_MAIN, p, jsonl_line_text) >= 20
    # stable ids across re-ingestion
    assert [e.id for e in parse(CC_MAIN).episodes] == ids


@needs_claude
def test_claude_code_real_subagent_files():
    p = parse(CC_SUB)
    assert detect_format(CC_SUB) == "claude-code" and p.malformed == []
    (ep,) = p.episodes
    # subagent lines carry the parent's sessionId: their own session id keeps them apart
    assert ep.id == f"claude-code:{SID}/agent-a5bdbc1:0"
    assert ep.session_id == f"{SID}/agent-a5bdbc1" and ep.meta["parent_session"] == SID
    assert ep.agent == "claude-code/agent-a5bdbc1"
    assert ep.summary.startswith("Write a poem about Thai yellow curry")
    assert ("WebSearch", "tool") in ents(ep)
    assert ("claude-code/agent-a5bdbc1", "uses", "WebSearch") in rels(ep)
    assert any(t == "endpoint" and "curry" in n for n, t in ents(ep))
    assert "title" not in ep.meta  # the parent's summary line is not this file's
    assert check_spans(CC_SUB, p, jsonl_line_text) >= 3


@needs_claude
def test_claude_code_every_real_file_parses_with_unique_ids():
    files = sorted(CLAUDE.rglob("*.jsonl"))
    assert len(files) >= 10 and any("subagents" in f.parts for f in files)
    seen: dict[str, Path] = {}
    total = 0
    for f in files:
        assert detect_format(f) == "claude-code", f
        p = parse(f)
        assert p.malformed == [], (f, p.malformed)
        assert p.episodes, f
        for e in p.episodes:
            assert e.id not in seen, (e.id, f, seen.get(e.id))
            seen[e.id] = f
            assert e.summary and e.text and e.first_ts and e.message_count > 0
            assert e.meta["enrichment"] == "deterministic"
        total += check_spans(f, p, jsonl_line_text)
    assert total >= 60


@needs_claude
def test_claude_code_tool_variants_fixtures():
    read = parse(CLAUDE / "fixture-read-tool-variants.jsonl").episodes[0]
    assert read.summary.startswith("Please perform the following file read operations on e2e-tests/conftest.py")
    # paths under the session's cwd are named relative to it
    assert ("Read", "touches", "conftest.py") in rels(read)
    assert ("e2e-tests", "project") in ents(read)
    edit = parse(CLAUDE / "fixture-edit-tool-variants.jsonl").episodes[0]
    assert ("Edit", "tool") in ents(edit)
    edited = {n for n, t in ents(edit) if t == "file" and n.endswith("edit_basic.txt")}
    assert edited and any(("Edit", "touches", f) in rels(edit) for f in edited)
    assert edit.meta["git_branch"] == "feature/edit-tool-rendering"


def test_claude_code_summary_of_another_session_and_compaction(tmp_path):
    f = tmp_path / "s1.jsonl"
    base = {"sessionId": "s1", "cwd": "/w/proj", "version": "2.1.0", "isSidechain": False}
    rows = [
        {"type": "summary", "summary": "A title of some other session", "leafUuid": "not-in-this-file"},
        {**base, "type": "user", "uuid": "u1", "timestamp": "2026-02-01T10:00:00Z",
         "message": {"role": "user", "content": "Add retries to the sync worker in core/sync.py"}},
        {**base, "type": "assistant", "uuid": "u2", "timestamp": "2026-02-01T10:00:03Z",
         "message": {"role": "assistant", "model": "claude-x", "content": [
             {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/proj/core/sync.py"}}]}},
        {**base, "type": "user", "uuid": "u3", "timestamp": "2026-02-01T10:00:04Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                 "content": "def run(): pass"}]}},
        {**base, "type": "system", "subtype": "compact_boundary", "uuid": "u4", "timestamp": "2026-02-01T10:05:00Z"},
        {**base, "type": "user", "uuid": "u5", "isCompactSummary": True, "timestamp": "2026-02-01T10:05:01Z",
         "message": {"role": "user", "content": "This session is being continued. Retries were added."}},
        {**base, "type": "user", "uuid": "u6", "timestamp": "2026-02-01T10:06:00Z",
         "message": {"role": "user", "content": "<bash-input>git status</bash-input>"}},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    p = parse(f)
    a, b = p.episodes
    assert "title" not in a.meta  # that summary line belongs to another session
    assert "tool Read: def run(): pass" in a.text  # tool results are named after their call
    assert ("Read", "touches", "core/sync.py") in rels(a)
    assert b.text.startswith("compaction summary: This session is being continued.")
    assert b.meta["prev"] == a.id and ("git status", "command") in ents(b)


# -- Hermes -------------------------------------------------------------------------------
def test_hermes_export():
    assert detect_format(HERMES) == "hermes"
    p = parse(HERMES)
    assert p.malformed == []
    a, b = p.episodes
    assert a.id == "hermes:20260310_141502_a1b2c3:0" and b.id == "hermes:20260311_090000_d4e5f6:0"
    assert a.source == "hermes" and a.agent == "hermes"
    assert a.channel == "telegram" and b.channel == "cli"
    assert a.meta["title"] == "Speed up api Docker build" and a.meta["model"] == "anthropic/claude-sonnet-4"
    assert a.first_ts == datetime.fromtimestamp(1773151510.5, tz=timezone.utc)
    assert a.last_ts == datetime.fromtimestamp(1773151700.0, tz=timezone.utc)
    assert a.summary == "Speed up api Docker build — Find why the Docker build of the api service is so slow " \
                        "and make it faster."
    # tool_calls as a list and as a JSON string; tool results named by tool_name
    assert {("terminal", "tool"), ("read_file", "tool"), ("docker build", "command"),
            ("services/api/Dockerfile", "file"), ("Docker", "technology")} <= ents(a)
    assert ("read_file", "touches", "services/api/Dockerfile") in rels(a)
    assert "tool terminal: #7 [3/6] COPY . /app" in a.text
    # the system prompt, reasoning and the background-review harness (prompt and reply) are not memory
    for gone in ("You are Hermes", "internal reasoning", "Review the conversation above", "Nothing new to save"):
        assert gone not in a.text + b.text, gone
    assert b.text.startswith("user: Remind me what we changed in the api Dockerfile yesterday")
    assert p.spans == [(1, 1, a.id), (2, 2, b.id)]
    assert check_spans(HERMES, p, lambda raw: "") == 0  # (one line a session: covered by the spans above)


def test_hermes_long_session_splits_on_gaps_all_on_one_line(tmp_path):
    msgs = [{"role": "user", "content": "Plan the Q3 roadmap for the memory service", "timestamp": 1000.0},
            {"role": "assistant", "content": "Draft: ledger first, then sync.", "timestamp": 1010.0},
            {"role": "user", "content": "Next morning: what was the plan again?", "timestamp": 1000.0 + 86400},
            {"role": "assistant", "content": "Ledger first, then sync.", "timestamp": 1005.0 + 86400},
            "not a message"]
    f = tmp_path / "export.jsonl"
    f.write_text(json.dumps({"id": "s9", "source": "discord", "messages": msgs}) + "\n")
    p = parse(f)
    a, b = p.episodes
    assert (a.id, b.id) == ("hermes:s9:0", "hermes:s9:1") and b.meta["prev"] == a.id
    assert p.spans == [(1, 1, a.id), (1, 1, b.id)]
    assert [(m.line, m.error) for m in p.malformed] == [(1, "messages: 1 item(s) not an object; skipped")]


# -- Markdown -----------------------------------------------------------------------------
def test_markdown_memory_file_without_front_matter():
    f = MD / "MEMORY.md"
    assert detect_format(f) == "markdown"
    p = parse(f)
    assert p.malformed == []
    headings = [e.meta["heading"] for e in p.episodes]
    # a heading without text is skipped; a '#' line inside a code fence is not a heading
    assert headings == ["Memory / Preferences", "Memory / Infrastructure",
                        "Memory / Infrastructure / 2026-03-05 Backup incident", "Memory / Projects"]
    sid = p.episodes[0].session_id
    assert sid.startswith("MEMORY-") and all(e.source == "manual" for e in p.episodes)
    assert [e.id for e in p.episodes] == [f"manual:{sid}:{i}" for i in range(4)]
    prefs, infra, incident, projects = p.episodes
    assert "周报每周五下午五点前发到飞书群" in prefs.text
    assert "rsync -az --delete /home/lin/photos" in infra.text and "a comment line" in infra.text
    assert ("rsync", "command") in ents(infra) and ("~/scripts/backup.sh", "file") in ents(infra)
    # a date in the heading dates the section; undated sections have none
    assert incident.first_ts == datetime(2026, 3, 5, tzinfo=timezone.utc) and prefs.first_ts is None
    assert incident.summary.startswith("Memory / Infrastructure / 2026-03-05 Backup incident — The NAS host key")
    assert {("Neo4j", "technology"), ("https://github.com/example/ars", "endpoint")} <= ents(projects)
    assert projects.meta["prev"] == incident.id
    assert p.spans == [(3, 6, prefs.id), (7, 14, infra.id), (15, 17, incident.id), (20, 21, projects.id)]
    # stable across re-ingestion of the same file
    assert [e.id for e in parse(f).episodes] == [e.id for e in p.episodes]


def test_markdown_daily_file_with_front_matter():
    f = MD / "memory" / "2026-03-06.md"
    p = parse(f)
    assert p.malformed == []
    morning, afternoon = p.episodes
    assert morning.meta["title"] == "Daily notes" and morning.agent == "main"
    assert morning.topics[:2] == ["backup", "cron"]  # front matter tags first
    assert ("Lin Wei", "person") in ents(morning)
    # no date in the front matter or headings: the file name's
    assert morning.first_ts == datetime(2026, 3, 6, tzinfo=timezone.utc)
    assert p.spans[0][0] == 9  # front matter lines belong to no episode
    assert afternoon.text.startswith("# Afternoon\nAdded a weekly cron job")


def test_markdown_front_matter_date_and_openclaw_tree(tmp_path):
    ws = tmp_path / "home" / ".openclaw" / "workspace" / "memory"
    ws.mkdir(parents=True)
    f = ws / "2026-03-18-telegram.md"
    f.write_text(
        "---\ndate: 2026-03-17\ntopics:\n  - signal\n---\n"
        "# Session: 2026-03-18 03:24:55 UTC\n\n"
        "- **Session Key**: agent:main:main\n- **Session ID**: a4c06588\n- **Source**: signal\n\n"
        "## Conversation Summary\n\n"
        "user: Conversation info (untrusted metadata):\n```json\n{\"message_id\": \"1\", \"sender\": \"David\"}\n```\n\n"
        "Switch the main agent to the Venice API key.\n"
        "assistant: HEARTBEAT_OK\n"
        "assistant: Done, the key is updated for this agent only.\n"
        "\n# Undated\nSomething without a date.\n",
        encoding="utf-8",
    )
    p = parse(f)
    assert p.malformed == []
    head, summary, undated = p.episodes
    assert head.source == "openclaw" and head.session_id == "workspace/memory/2026-03-18-telegram"
    assert head.agent == "main" and head.id == "openclaw:workspace/memory/2026-03-18-telegram:0"
    # a date (and time) in the heading trail wins over the front matter's
    assert summary.first_ts == datetime(2026, 3, 18, 3, 24, 55, tzinfo=timezone.utc)
    assert undated.first_ts == datetime(2026, 3, 17, tzinfo=timezone.utc)  # the front matter's
    assert head.channel == "signal"
    assert "untrusted metadata" not in summary.text and "HEARTBEAT_OK" not in summary.text
    assert "Switch the main agent to the Venice API key." in summary.text
    assert "signal" in summary.topics


def test_markdown_broken_front_matter_fixture_still_ingests_the_body():
    f = MD / "memory" / "2026-03-07-broken.md"
    p = parse(f)
    assert [(m.line, m.error) for m in p.malformed] == [
        (1, "front matter opened on line 1 is never closed with '---'; read as text")]
    assert any(e.text.startswith("# Still readable\nThe body after a broken front matter") for e in p.episodes)
    assert all(e.first_ts == datetime(2026, 3, 7, tzinfo=timezone.utc) for e in p.episodes)


def test_markdown_notes_without_headings_or_front_matter(tmp_path):
    f = tmp_path / "scratch.md"
    f.write_text("just a line about deploy.sh\n\nand another paragraph\n")
    (ep,) = parse(f).episodes
    assert ep.source == "manual" and ep.meta["heading"] == ""
    assert ep.summary == "just a line about deploy.sh" and ("deploy.sh", "file") in ents(ep)


# -- generic JSONL and detection ------------------------------------------------------------
def test_generic_jsonl_interleaved_sessions_have_exact_spans(tmp_path):
    f = tmp_path / "chat.jsonl"
    rows = [
        {"session_id": "a", "role": "user", "content": "alpha one about kubernetes", "timestamp": "2026-01-01T10:00:00Z"},
        {"session_id": "b", "role": "user", "content": "beta one", "timestamp": "2026-01-01T10:00:01Z"},
        {"session_id": "a", "role": "assistant", "content": "alpha two", "timestamp": "2026-01-01T10:00:02Z"},
        {"session_id": "a", "role": "assistant", "content": "", "timestamp": "2026-01-01T10:00:03Z"},
        {"session_id": "a", "role": "user", "content": "alpha after a long gap", "timestamp": "2026-01-01T12:00:00Z"},
        {"session_id": "b", "role": "assistant", "content": "NO_REPLY", "timestamp": "2026-01-01T12:00:01Z"},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert detect_format(f) == "jsonl"
    p = parse_jsonl(f)
    assert [e.id for e in p.episodes] == ["jsonl:a:0", "jsonl:a:1", "jsonl:b:0"]
    assert p.episodes[1].meta["prev"] == "jsonl:a:0"
    # a line of session b between two of a's keeps a's span from covering it
    assert sorted(p.spans) == [(1, 1, "jsonl:a:0"), (2, 2, "jsonl:b:0"), (3, 3, "jsonl:a:0"), (5, 5, "jsonl:a:1")]
    assert ("Kubernetes", "technology") in ents(p.episodes[0])


def test_detect_format(tmp_path):
    assert detect_format(ROOT / "samples" / "episodes.jsonl") == "episodes"
    assert detect_format(OPENCLAW) == "openclaw" and detect_format(HERMES) == "hermes"
    assert detect_format(MD / "notes.md") == "markdown"
    # first lines too long to parse whole are still recognised by their opening keys
    big = "x" * (2 * 1024 * 1024)
    cc = tmp_path / "cc.jsonl"
    cc.write_text(json.dumps({"parentUuid": None, "isSidechain": False, "sessionId": "s", "version": "2",
                              "type": "user", "message": {"role": "user", "content": big}}) + "\n")
    assert detect_format(cc) == "claude-code"
    h = tmp_path / "h.jsonl"
    h.write_text(json.dumps({"id": "s", "source": "cli", "system_prompt": big, "started_at": 1.5,
                             "messages": []}) + "\n")
    assert detect_format(h) == "hermes"
    # a malformed first line does not decide: the next good one does
    mixed = tmp_path / "m.jsonl"
    shutil.copy(OPENCLAW, mixed)
    mixed.write_text('{"type": "sess\n' + OPENCLAW.read_text())
    assert detect_format(mixed) == "openclaw"
    assert set(PARSERS) == {"openclaw", "claude-code", "hermes", "markdown", "episodes", "jsonl"}


def test_ingest_formats_end_to_end_and_raw_file_recall(tmp_path):
    """Through the pipeline into SQLite, then found again by the raw-file tier
    (which maps line hits back to episodes through the spans)."""
    from core.ingest.pipeline import ingest

    from conftest import make_memory

    memory = make_memory(tmp_path / "state", neo4j_uri=None)
    try:
        report = ingest(memory, [OPENCLAW, HERMES, MD / "MEMORY.md"])
        assert report.episodes_added == 3 + 2 + 4 and report.malformed == []
        res = memory.recall("known_hosts firmware", k=5, tiers="files")
        assert res.tiers[0].status == "ok"
        hit_ids = [h.episode_id for h in res.hits]
        assert "openclaw:5f1c2a9e-7d41-4a0b-9c3e-2b8f6d1e0a77:0" in hit_ids
        res = memory.recall("dockerignore pip cache layer", k=3, tiers="sqlite")
        assert res.hits and res.hits[0].episode_id == "hermes:20260310_141502_a1b2c3:0"
    finally:
        memory.close()
