"""Discovery and loading of tool modules (private; the public names live in customtools)."""
