"""Entry point of the ``wecom`` platform (kept cheap: aiohttp loads when the gateway starts)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import PlatformAdapter, hookimpl


@hookimpl
def hermes_register_platforms(register: Callable[[PlatformAdapter], None]) -> None:
    """Register the ``wecom`` adapter."""
    from .adapter import WeComAdapter

    register(WeComAdapter())
