"""core stays free of UI: importable without textual, typer or rich."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
UI = ("textual", "typer", "rich", "tui")


def loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return {m.split(".")[0] for m in out.split()}


def test_core_imports_without_ui():
    mods = loaded_after("import core, core.api, core.memory.memory, core.ingest.pipeline, core.memory.tiers.neo4j")
    assert not (mods & set(UI)), mods & set(UI)


def test_ars_recall_does_not_load_textual():
    mods = loaded_after("import tui.cli.main")
    assert "textual" not in mods


def test_core_source_never_imports_ui():
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        for no, line in enumerate(path.read_text().splitlines(), 1):
            s = line.strip()
            if s.startswith(("import ", "from ")) and s.split()[1].split(".")[0] in UI:
                offenders.append(f"{path.relative_to(ROOT)}:{no}: {s}")
    assert offenders == []


def test_a_fresh_recall_loads_only_what_recall_needs():
    """Every CLI call and agent hook is a fresh process: `ars recall` must not
    pay for ingestion, the sync worker, the extractor, pydantic-settings, or
    the Neo4j driver when no Neo4j is configured (see core/config.py, core/api.py)."""
    out = subprocess.run([sys.executable, "-c", "import sys; import tui.cli.main; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
    heavy = {"core.ingest.parsers", "core.consumers.neo4j_push", "core.enrich.extract", "pydantic_settings", "neo4j",
             "core.loop.engine", "asyncio"}
    assert heavy.isdisjoint(out), heavy & set(out)
