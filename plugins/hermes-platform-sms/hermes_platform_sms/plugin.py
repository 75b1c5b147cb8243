"""Entry point of the ``sms`` platform (kept cheap: the SDK loads when the gateway starts)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import PlatformAdapter, hookimpl


@hookimpl
def hermes_register_platforms(register: Callable[[PlatformAdapter], None]) -> None:
    """Register the ``sms`` adapter."""
    from .adapter import SmsAdapter

    register(SmsAdapter())
