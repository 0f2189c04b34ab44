"""One module a transcript format, and the helpers they share.

Formats: ``openclaw`` (+ ``openclaw_tree``, its session tree), ``claude_code``,
``hermes`` (the ``sessions export`` JSONL), ``markdown``, ``generic`` (episode
lines and generic message JSONL). Each exposes ``stream_<format>(path, parsed)``
and ``parse_<format>(path) -> Parsed``; ``core.ingest.parsers`` registers them
and detects which one a file needs. Shared: ``parsed`` (a parser's answer),
``lines`` (reading a file line by line), ``message_text`` (what a message's
text is and what of it to keep), ``sessions`` (a session's messages -> episodes).
"""
