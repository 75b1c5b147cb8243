"""Import Claude Code session logs into Hermes sessions."""
