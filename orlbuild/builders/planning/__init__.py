"""Planning: which judgments decide the most order next (docs/planning.md)."""
