"""Shared by the Matrix end-to-end tests: the gateway's Matrix settings for a Synapse user, and
waiting for something the homeserver shows."""

from __future__ import annotations

import time
from typing import Any

from synapse_homeserver import MatrixUser, Synapse


def matrix_settings(synapse: Synapse, bot: MatrixUser, **extra: Any) -> dict[str, Any]:
    """``gateway.platforms.matrix`` for ``bot`` on ``synapse`` (quick edits and syncs)."""
    return {
        "homeserver": synapse.base_url,
        "user_id": bot.user_id,
        "password": bot.password,
        "stream_edit_seconds": 0.2,
        "sync_timeout_seconds": 2,
        **extra,
    }


def wait_until(check: Any, what: str, timeout: float = 60.0) -> None:
    """Poll ``check`` until it is true (AssertionError naming ``what`` after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting until {what}")


def home_room(alice: MatrixUser, bot: MatrixUser) -> str:
    """A room alice creates with the bot in it, made the gateway's Matrix home channel with
    ``/sethome`` (the bot's reply awaited); its id."""
    room = alice.create_room([bot.user_id], name="Home room")
    wait_until(lambda: bot.user_id in alice.members(room), "the bot joined the room")
    alice.send(room, "/sethome")
    alice.wait_for_messages(room, bot.user_id, 1)
    return room
