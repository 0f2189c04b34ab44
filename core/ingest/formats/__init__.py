"""One module a transcript format; ``common`` holds what they share.

Each exposes ``parse_<format>(path) -> Parsed``; ``core.ingest.parsers``
registers them in ``PARSERS`` and detects which one a file needs.
"""

from .claude_code import parse_claude_code
from .hermes import parse_hermes
from .markdown import parse_markdown
from .openclaw import parse_openclaw

__all__ = ["parse_claude_code", "parse_hermes", "parse_markdown", "parse_openclaw"]
