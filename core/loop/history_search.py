"""Search the loops' history files for words (``ars loop search``, the dashboard's
search): one hit per loop, at the first entry that holds every word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from core.errors import BadQuery


def search_histories(state_dir: Path, text: str, limit: int = 100,
                     stop: Callable[[], bool] | None = None) -> list[dict[str, Any]]:
    """Loops whose history holds every word of ``text`` (case-insensitive), as ``{loop_id,
    goal_id, index, status, field, snippet}``, the most recently written first. Reads the
    files as bytes and parses only the lines that match, so 100,000 entries take seconds,
    not minutes; ``stop()`` ends it early."""
    from core.loop.checkpoints import CHECKPOINTS  # loaded on use: the facade imports this module

    words = [w.casefold() for w in text.split()][:8]
    if not words:
        raise BadQuery("say what to look for in the loops' histories")
    needles = [w.encode() for w in words]
    out: list[dict[str, Any]] = []
    folder = Path(state_dir) / CHECKPOINTS
    try:
        files = sorted(folder.glob("*.history.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except FileNotFoundError:
        return []
    for path in files:
        if len(out) >= limit or (stop is not None and stop()):
            break
        try:
            data = path.read_bytes()
        except OSError:
            continue
        low = data.lower()
        if not all(n in low for n in needles):
            continue
        start = 0
        for line in low.split(b"\n"):
            end = start + len(line) + 1
            if line and all(n in line for n in needles):
                try:
                    entry = json.loads(data[start:end])
                except ValueError:
                    start = end
                    continue
                where, snippet = _find_words(entry, words)
                if where:
                    st = entry.get("state") or {}
                    out.append({"loop_id": st.get("loop_id", ""), "goal_id": st.get("goal_id", ""),
                                "index": entry.get("index"), "status": entry.get("to_status", ""),
                                "field": where, "snippet": snippet})
                    break
            start = end
    return out


def _find_words(value: Any, words: list[str], path: str = "") -> tuple[str, str]:
    """The first string inside ``value`` that holds every word: (its path, a snippet)."""
    if isinstance(value, str):
        low = value.casefold()
        if all(w in low for w in words):
            at = low.find(words[0])
            text = " ".join(value[max(0, at - 60): at + 140].split())
            return path or "-", text
        return "", ""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return "", ""
    for k, v in items:
        if k == "state" and path == "":
            continue  # the entry's own fields first; the state snapshot after
        found = _find_words(v, words, f"{path}.{k}" if path else str(k))
        if found[0]:
            return found
    if isinstance(value, dict) and path == "" and "state" in value:
        return _find_words(value["state"], words, "state")
    return "", ""
