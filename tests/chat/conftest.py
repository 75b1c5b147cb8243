"""Fixtures of the chat tests (``server``: the stand-in model endpoint)."""

from chat_helpers import server

__all__ = ["server"]
