"""The ``discord`` platform of the Hermes sessions gateway (discord.py)."""
