"""Export sessions as Claude Code JSONL traces, optionally uploaded to the Hugging Face Hub."""
