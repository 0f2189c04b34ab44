"""Which loops a changed file belongs to: the dashboard watches the state directory
and reloads only the loops whose checkpoint, history or decision files changed."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable
from urllib.parse import unquote


def loop_ids_for_paths(state_dir: Path, paths: Iterable[str | Path]) -> tuple[set[str], bool]:
    """The loop ids whose files are among ``paths``; the flag is true when a name could not
    be mapped back to its loop (a shortened name), so the caller should list every loop again."""
    checkpoints = (Path(state_dir) / "checkpoints").resolve()
    approvals = (Path(state_dir) / "approvals").resolve()
    ids: set[str] = set()
    rescan = False
    for raw in paths:
        p = Path(raw)
        name = p.name
        if name.startswith(".") or name.endswith(".tmp"):
            continue
        parent = p.parent.resolve() if p.parent.exists() else p.parent
        if parent == checkpoints:
            if name.endswith(".history.jsonl"):
                base = name[: -len(".history.jsonl")]
            elif name.endswith(".json"):
                base = name[: -len(".json")]
            else:
                continue
            part = base.rsplit("__", 1)[-1]
        elif parent == approvals and name.endswith(".json"):
            part = name[: -len(".json")].split("__", 1)[0]
        else:
            continue
        if "~" in part or not part:
            rescan = True  # a name cut to its length limit: not reversible
            continue
        ids.add(unquote(part, errors="surrogatepass"))
    return ids, rescan
