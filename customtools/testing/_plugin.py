"""The customtools pytest plugin (being written)."""
