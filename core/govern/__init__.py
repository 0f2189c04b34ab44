"""Memory the supervisor governs: secrets kept out (redact.py), forgetting (forget.py), export (export.py)."""
