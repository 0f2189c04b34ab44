"""Command groups of the ``ars`` CLI that live in modules of their own (registered in tui/cli/main.py)."""
