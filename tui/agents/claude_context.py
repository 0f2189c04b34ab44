"""Claude Code's ``SessionStart`` hook: the startup context ARS gives a new session.

What ``ars rehydrate`` writes (open loops, next steps, memories, sync health),
memories recalled for the project directory's name and the requests waiting in
the inbox, as ``additionalContext`` (cut to ``CONTEXT_LIMIT`` characters).
"""

from __future__ import annotations

import os

CONTEXT_LIMIT = 9_500  # characters of additionalContext (Claude Code previews larger hook output)
PROJECT_MEMORIES = 5


def session_start(event: dict, state: str, say, answer) -> int:
    if not os.path.isdir(state):
        say(f"no ARS state directory at {state} yet: no startup context")
        return 0
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from core.api import ARS
    from core.api import load_settings
    from core.api import render_markdown

    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else ""
    project = os.path.basename(os.path.normpath(cwd)) if cwd else ""
    parts: list[str] = []
    with ARS(load_settings(state_dir=state), create=False) as ars:
        if project:
            parts.append(_project_memories(ars, project))
        parts.append(_waiting(ars))
        report = ars.rehydrate(write=True)
        parts.append(render_markdown(report))
    head = (f"ARS memory for this session (state directory {os.path.abspath(state)}). "
            "Recall more with `ars recall \"...\"` (or the ARS MCP tools); risky tool calls wait for a person "
            "in the ARS inbox.")
    text = "\n\n".join([head] + [p for p in parts if p])
    if len(text) > CONTEXT_LIMIT:
        tail = f"\n\n[... cut at {CONTEXT_LIMIT:,} characters; `ars rehydrate` prints all of it]"
        text = text[: CONTEXT_LIMIT - len(tail)] + tail
    return answer({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}})


def _project_memories(ars, project: str) -> str:
    try:
        result = ars.recall(project, k=PROJECT_MEMORIES)
    except Exception as exc:  # noqa: BLE001 - a part of the context, never the whole
        return f"## Memories for {project}\n\n(recall failed: {' '.join(str(exc).split())[:160]})"
    lines = [f"## Memories for {project}", ""]
    if not result.hits:
        lines.append("None recalled for this project's name.")
    for h in result.hits:
        lines.append(f"- `{h.episode_id}` ({h.score:.3f}): {' '.join(h.snippet.split())}")
    if result.degraded:
        lines.append("(recall degraded: " + ", ".join(f"{t.tier} {t.status}" for t in result.tiers
                                                      if t.status in ("down", "timeout", "error")) + ")")
    return "\n".join(lines)


def _waiting(ars) -> str:
    try:
        pending = [r for r in ars.inbox.list("pending")]
    except Exception as exc:  # noqa: BLE001
        return f"## Waiting in the ARS inbox\n\n(cannot list it: {' '.join(str(exc).split())[:160]})"
    if not pending:
        return ""
    lines = [f"## Waiting in the ARS inbox ({len(pending)})", ""]
    for r in pending[:10]:
        lines.append(f"- `{r.id}` {r.source} {r.risk}: {r.summary[:200]}")
    if len(pending) > 10:
        lines.append(f"- ... and {len(pending) - 10} more (`ars inbox list`)")
    return "\n".join(lines)
