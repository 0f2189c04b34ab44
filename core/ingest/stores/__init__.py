"""Agents' own session stores (SQLite databases and their archives), read in place.

``discover`` finds them under the paths given to ``ars ingest``; ``openclaw_db`` and
``hermes_db`` turn them into episodes; ``cursor`` remembers what was read so a
re-ingest reads only what is new; ``sqlite_ro`` opens an agent's database without
ever blocking its writer or leaving files behind.
"""
