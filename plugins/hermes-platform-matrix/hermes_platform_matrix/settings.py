"""The ``gateway.platforms.matrix`` settings, checked: every problem is one line naming the key."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_hookspecs import UserFacingError

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
    stream_edit_seconds: float
    """How often a streaming answer's message is edited with the text so far (0: send once)."""
    sync_timeout_ms: int


def _text(config: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = config.get(name)
    if value is None or value == "":
        env_name = config.get(f"{name}_env")
        if isinstance(env_name, str) and env_name:
            value = os.environ.get(env_name) or None
    if value is None:
        if required:
            raise UserFacingError(f"{PREFIX}.{name} is not set")
        return None
    if not isinstance(value, str):
        raise UserFacingError(f"{PREFIX}.{name} must be a string")
    return value


def _ids(config: Mapping[str, Any], name: str) -> frozenset[str]:
    value = config.get(name) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UserFacingError(f"{PREFIX}.{name} must be a list of ids")
    return frozenset(value)


def _number(config: Mapping[str, Any], name: str, default: float) -> float:
    value = config.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise UserFacingError(f"{PREFIX}.{name} must be a number of seconds (0 or more)")
    return float(value)


def parse_settings(config: Mapping[str, Any]) -> MatrixSettings:
    """The settings under ``gateway.platforms.matrix``; raises ``UserFacingError`` (one line
    naming the key) for a missing or malformed one."""
    homeserver = _text(config, "homeserver", required=True)
    assert homeserver is not None
    if not homeserver.startswith(("http://", "https://")):
        raise UserFacingError(f"{PREFIX}.homeserver must be an http:// or https:// URL")
    user_id = _text(config, "user_id", required=True)
    assert user_id is not None
    if not user_id.startswith("@") or ":" not in user_id:
        raise UserFacingError(f"{PREFIX}.user_id must look like @name:server")
    token = _text(config, "access_token")
    password = _text(config, "password")
    if token is None and password is None:
        raise UserFacingError(f"{PREFIX}.access_token is not set (nor {PREFIX}.password)")
    auto_join = config.get("auto_join", True)
    if not isinstance(auto_join, bool):
        raise UserFacingError(f"{PREFIX}.auto_join must be true or false")
    return MatrixSettings(
        homeserver=homeserver.rstrip("/"),
        user_id=user_id,
        access_token=token,
        password=password,
        device_id=_text(config, "device_id") or "HERMES",
        allowed_rooms=_ids(config, "allowed_rooms"),
        allowed_users=_ids(config, "allowed_users"),
        auto_join=auto_join,
        stream_edit_seconds=_number(config, "stream_edit_seconds", 1.0),
        sync_timeout_ms=int(_number(config, "sync_timeout_seconds", 30.0) * 1000),
    )
