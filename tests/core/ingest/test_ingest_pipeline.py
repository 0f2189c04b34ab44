"""Ingestion as a person runs it: mixed folders, vanishing and unreadable files,
missing paths, and `ars enrich --pending` against a local chat-completions server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.ingest.pipeline import ingest

from conftest import env_without_ars, make_memory, SAMPLE, write_episodes
from agents_stub.enrich_server import GOOD, OPENCLAW, ChatServer  # the local chat-completions server

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code"


def test_folder_mixing_formats_detects_each(state_dir, tmp_path):
    folder = tmp_path / "mixed"
    (folder / "openclaw").mkdir(parents=True)
    shutil.copy(SAMPLE, folder / "episodes.jsonl")
    shutil.copy(OPENCLAW, folder / "openclaw" / OPENCLAW.name)
    shutil.copy(next(CLAUDE.glob("*.jsonl")), folder / "claude.jsonl")
    write_episodes(folder / "chat.jsonl", [{"role": "user", "content": "plain generic message", "session_id": "g1"}])
    (folder / "MEMORY.md").write_text("# Preferences\nLikes summaries at 9am.\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not an ingestible format\n")
    mem = make_memory(state_dir)
    report = ingest(mem, [folder])
    formats = {Path(f.file).name: f.format for f in report.per_file}
    assert formats == {"episodes.jsonl": "episodes", OPENCLAW.name: "openclaw", "claude.jsonl": "claude-code",
                       "chat.jsonl": "jsonl", "MEMORY.md": "markdown"}
    assert report.failed_files == 0 and report.episodes_added > 12
    sources = {mem.sqlite.get(i).source for i in mem.sqlite.ids()}
    assert {"openclaw", "claude-code", "jsonl"} <= sources
    mem.close()


def test_missing_path_is_reported_and_the_rest_ingested(state_dir, tmp_path):
    mem = make_memory(state_dir)
    report = ingest(mem, [tmp_path / "gone.jsonl", SAMPLE])
    assert report.episodes_added == 10 and report.failed_files == 1
    assert [(m.file.endswith("gone.jsonl"), m.line, m.error) for m in report.malformed] == [
        (True, 0, "no such file or directory")]
    mem.close()


def test_file_that_disappears_mid_read(state_dir, tmp_path, monkeypatch):
    """The file is listed, then removed before its parser opens it."""
    folder = tmp_path / "f"
    folder.mkdir()
    keep = write_episodes(folder / "a.jsonl", [{"id": "a", "text": "stays"}])
    vanish = write_episodes(folder / "b.jsonl", [{"id": "b", "text": "vanishes"}])
    from core.ingest import pipeline

    real = pipeline.detect_format

    def detect_then_vanish(path):
        kind = real(path)
        if path.name == "b.jsonl":
            vanish.unlink()
        return kind

    monkeypatch.setattr(pipeline, "detect_format", detect_then_vanish)
    mem = make_memory(state_dir)
    report = ingest(mem, [folder])
    assert mem.sqlite.has("a") and not mem.sqlite.has("b")
    bad = [m for m in report.malformed if m.file.endswith("b.jsonl")]
    assert len(bad) == 1 and bad[0].line == 0, report.malformed
    assert "no such file" in bad[0].error.lower() or "not found" in bad[0].error.lower(), bad[0].error
    assert keep.exists()
    mem.close()


def test_file_without_read_permission(tmp_path):
    """Root reads anything, so as root the command runs without the
    capabilities that bypass file permissions (setpriv, util-linux)."""
    state = tmp_path / "state"
    secret = write_episodes(tmp_path / "secret.jsonl", [{"id": "s", "text": "secret"}])
    ok = write_episodes(tmp_path / "ok.jsonl", [{"id": "o", "text": "readable"}])
    os.chmod(secret, 0o000)
    env = env_without_ars()
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
                  "--bounding-set=-dac_override,-dac_read_search"]
    r = subprocess.run([*prefix, sys.executable, "-m", "tui.cli.main", "ingest", str(secret), str(ok), "--state",
                        str(state), "--json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 1, r.stderr  # some inputs failed, the rest ingested
    rep = json.loads(r.stdout)
    assert rep["episodes_added"] == 1 and rep["failed_files"] == 1
    assert any(m["file"].endswith("secret.jsonl") and "ermission" in m["error"] for m in rep["malformed"])


@pytest.fixture
def chat_server():
    srv = ChatServer()
    yield srv
    srv.close()


def test_ars_enrich_pending_end_to_end(chat_server, tmp_path):
    """Ingest while the model's quota is gone, then `ars enrich --pending` when it is back."""
    env = env_without_ars()
    env.update({"ARS_STATE_DIR": str(tmp_path / "state"), "ARS_OPENAI_BASE_URL": chat_server.base_url,
                "OPENAI_API_KEY": "sk-test", "ARS_ENRICH_WITH_LLM": "true", "ARS_OPENAI_TIMEOUT": "5"})
    chat_server.mode = "quota"
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "ingest", str(OPENCLAW), "--json"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["episodes_added"] == 3
    chat_server.mode = "good"
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "enrich", "--pending", "--json"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"upgraded": 3, "still_pending": 0}
    r = subprocess.run([sys.executable, "-m", "tui.cli.main", "recall", "NAS host key", "--json"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=120)
    top = json.loads(r.stdout)["hits"][0]
    assert GOOD["summary"][:20] in top["snippet"] or top["episode_id"].startswith("openclaw:")
