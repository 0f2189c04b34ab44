"""Episodic memory: the store, recall over the tiers, scoring, text."""
