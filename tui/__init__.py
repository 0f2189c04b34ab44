"""ARS front ends: the `ars` command and the Textual dashboard."""
