"""Turning files into episodes (parsers) and episodes into memory (pipeline)."""

# The formats ``--format`` accepts, here so the CLI names them without
# importing every parser (``parsers.PARSERS`` holds one for each).
FORMATS = ("auto", "openclaw", "claude-code", "hermes", "markdown", "episodes", "jsonl")
