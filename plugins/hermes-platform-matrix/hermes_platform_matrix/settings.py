"""The ``gateway.platforms.matrix`` settings, checked: every problem is one line naming the key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_hookspecs.adapter_kit import SettingsReader

PREFIX = "gateway.platforms.matrix"


@dataclass(frozen=True, slots=True)
class MatrixSettings:
    """How the adapter logs in and whom it answers."""

    homeserver: str
    user_id: str
    access_token: str | None
    password: str | None
    device_id: str
    allowed_rooms: frozenset[str]
    """Room ids the bot answers in; empty: every room it is in."""
    allowed_users: frozenset[str]
    """User ids the bot answers (and accepts invites from); empty: everyone."""
    auto_join: bool
    """Accept invites (from allowed users, to allowed rooms); default true."""
    stream_edit_seconds: float
    """How often a streaming answer's message is edited with the text so far (0: send once)."""
    sync_timeout_ms: int
    catch_up_max_age: float | None = None
    """Seconds; a caught-up message older than that is stored but not answered (unset: all)."""


DEFAULTS: Mapping[str, Any] = {
    "auto_join": True,
    "stream_edit_seconds": 1.0,
    "sync_timeout_seconds": 30.0,
}


def parse_settings(config: Mapping[str, Any]) -> MatrixSettings:
    """The settings under ``gateway.platforms.matrix``; raises ``UserFacingError`` (one line
    naming the key) for a missing or malformed one."""
    read = SettingsReader("matrix", config, DEFAULTS)
    homeserver = read.text("homeserver", required=True)
    assert homeserver is not None
    if not homeserver.startswith(("http://", "https://")):
        raise read.problem("homeserver", "must be an http:// or https:// URL")
    user_id = read.text("user_id", required=True)
    assert user_id is not None
    if not user_id.startswith("@") or ":" not in user_id:
        raise read.problem("user_id", "must look like @name:server")
    token = read.text("access_token")
    password = read.text("password")
    if token is None and password is None:
        raise read.problem("access_token", f"is not set (nor {PREFIX}.password)")
    return MatrixSettings(
        homeserver=homeserver.rstrip("/"),
        user_id=user_id,
        access_token=token,
        password=password,
        device_id=read.text("device_id") or "HERMES",
        allowed_rooms=read.names("allowed_rooms"),
        allowed_users=read.names("allowed_users"),
        auto_join=read.flag("auto_join"),
        stream_edit_seconds=read.number("stream_edit_seconds"),
        sync_timeout_ms=int(read.number("sync_timeout_seconds") * 1000),
        catch_up_max_age=read.optional_seconds("catch_up_max_age"),
    )
