"""``gateway.platforms.bluebubbles`` read and checked: each mistake is one line naming the key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_hookspecs.adapter_kit import SettingsReader

DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8647,
    "path": "/bluebubbles/webhook",
    "ack_wait_seconds": 10,
}


@dataclass(frozen=True)
class BlueBubblesSettings:
    """The server, its password, and where the webhook endpoint listens."""

    url: str
    password: str
    host: str
    port: int
    path: str
    ack_wait_seconds: float
    catch_up_max_age: float | None


def parse_settings(config: Mapping[str, Any]) -> BlueBubblesSettings:
    """The checked settings; :class:`~hermes_hookspecs.UserFacingError` (one line) for a
    missing ``url`` or ``password``, or a wrong value."""
    read = SettingsReader("bluebubbles", config, DEFAULTS)
    url = read.text("url", required=True, what="the BlueBubbles server's address")
    if not url or not url.startswith(("http://", "https://")):
        raise read.problem("url", "must start with http:// or https://")
    password = read.secret("password", "the BlueBubbles server's password")
    port = read.port()
    path = read.text("path", required=True) or ""
    if not path.startswith("/"):
        raise read.problem("path", "must start with /")
    return BlueBubblesSettings(
        url=url,
        password=password,
        host=read.text("host", required=True) or "",
        port=port,
        path=path,
        ack_wait_seconds=read.number("ack_wait_seconds", positive=True),
        catch_up_max_age=read.optional_seconds("catch_up_max_age"),
    )
