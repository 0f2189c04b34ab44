"""One module a transcript format; ``common`` holds what they share.

Each exposes ``parse_<format>(path) -> Parsed``; ``core.ingest.parsers``
registers them in ``PARSERS`` and detects which one a file needs.
"""

from core.ingest.formats.claude_code import parse_claude_code
from core.ingest.formats.hermes import parse_hermes
from core.ingest.formats.markdown import parse_markdown
from core.ingest.formats.openclaw import parse_openclaw

__all__ = ["parse_claude_code", "parse_hermes", "parse_markdown", "parse_openclaw"]
