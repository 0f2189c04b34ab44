"""Turning files into episodes (parsers) and episodes into memory (pipeline)."""
