"""Import Codex CLI session logs into Hermes sessions."""
