"""The ``telegram`` platform of the Hermes sessions gateway (python-telegram-bot)."""
