"""Hermes as a Home Assistant conversation agent (a gateway platform plugin)."""
