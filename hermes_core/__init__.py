"""Hermes sessions: every conversation an AI agent has, in one local SQLite store.

The public Python API is :class:`hermes_core.store.SessionStore`; the plugin contract lives in
the separate ``hermes_hookspecs`` distribution.
"""

from __future__ import annotations

__version__ = "0.1.0"
