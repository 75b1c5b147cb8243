"""Entry point of the ``weixin`` platform (kept cheap: aiohttp loads when the gateway starts)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import PlatformAdapter, hookimpl


@hookimpl
def hermes_register_platforms(register: Callable[[PlatformAdapter], None]) -> None:
    """Register the ``weixin`` adapter."""
    from .adapter import WeixinAdapter

    register(WeixinAdapter())
