"""Widgets shared by the dashboard's views."""
