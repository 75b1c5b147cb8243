"""Fixtures of the batch tests (``server``: the stand-in model endpoint)."""

from batch_helpers import server

__all__ = ["server"]
