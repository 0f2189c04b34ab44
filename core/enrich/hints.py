"""``Hints``: what a parser knows for sure from the format itself (tool calls and
their arguments, people, agents, channels, projects, the user's requests, a
title), handed to the extractor beside the episode's text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
