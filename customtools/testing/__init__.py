"""Helpers for testing tool packs (being written)."""
