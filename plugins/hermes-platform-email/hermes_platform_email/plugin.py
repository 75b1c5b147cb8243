"""Entry point of the ``email`` platform (kept cheap: the adapter loads when the gateway starts)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import PlatformAdapter, hookimpl


@hookimpl
def hermes_register_platforms(register: Callable[[PlatformAdapter], None]) -> None:
    """Register the ``email`` adapter."""
    from .adapter import EmailAdapter

    register(EmailAdapter())
