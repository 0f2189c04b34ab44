"""Which inbox request a decided tool call was: ``<state>/inbox/links/<session>.<call>``.

Written when the call's decision becomes memory (core/inbox/call_episode.py);
read by the agent's post-tool hook, which knows only its session and call id,
to record what ran. Standard library only: every tool call's hook looks here.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

LINKS = "links"
_ID_RE = re.compile(r"^req-[0-9a-f]{12}$")  # core.inbox.store.ID_RE (not imported: it loads pydantic)


def link_path(state_dir: str | os.PathLike, session: str, call_id: str) -> Path:
    s = hashlib.sha256(str(session).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    c = hashlib.sha256(f"{session}\0{call_id}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(state_dir) / "inbox" / LINKS / f"{s}.{c}"


def link(state_dir: str | os.PathLike, session: str, call_id: str, request_id: str) -> None:
    from core.infra.fsutil import atomic_write, private_dir

    path = link_path(state_dir, session, call_id)
    private_dir(path.parent)
    atomic_write(path, request_id)


def linked(state_dir: str | os.PathLike, session: str, call_id: str) -> str | None:
    """The request id of this call, or None (one failed open when there is none)."""
    try:
        found = link_path(state_dir, session, call_id).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return found if _ID_RE.match(found) else None


def session_links(state_dir: str | os.PathLike, session: str) -> list[str]:
    """The request ids linked to ``session``'s calls."""
    folder = Path(state_dir) / "inbox" / LINKS
    prefix = hashlib.sha256(str(session).encode("utf-8", "surrogatepass")).hexdigest()[:16] + "."
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return []
    out = []
    for n in names:
        try:
            rid = (folder / n).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if _ID_RE.match(rid) and rid not in out:
            out.append(rid)
    return out


def unlink(state_dir: str | os.PathLike, session: str, call_id: str) -> None:
    """The call is over and its outcome recorded: a later call with the same input is another call."""
    try:
        os.unlink(link_path(state_dir, session, call_id))
    except OSError:
        pass
