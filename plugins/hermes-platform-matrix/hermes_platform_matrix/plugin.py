"""Entry point of the ``matrix`` platform (kept cheap: matrix-nio loads when the gateway starts)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import PlatformAdapter, hookimpl


@hookimpl
def hermes_register_platforms(register: Callable[[PlatformAdapter], None]) -> None:
    """Register the ``matrix`` adapter."""
    from .adapter import MatrixAdapter

    register(MatrixAdapter())
