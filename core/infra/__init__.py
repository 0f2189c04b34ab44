"""Plumbing every part uses: circuit breakers, thread pools, locks, private durable files, the SQLite seam."""
