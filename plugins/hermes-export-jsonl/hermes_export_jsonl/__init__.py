"""Export sessions as JSON Lines (one object per session) and restore such backups."""
