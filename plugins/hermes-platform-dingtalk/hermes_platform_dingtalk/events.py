"""What a DingTalk robot receives, read: the ``timestamp``/``sign`` headers checked, and a
message as the gateway's event (pure functions over the documented shapes)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_hookspecs import Attachment, PlatformEvent

SIGN_WINDOW_SECONDS = 3600
"""DingTalk's rule: a ``timestamp`` more than an hour from the clock is not from DingTalk."""


def sign(timestamp: str, app_secret: str) -> str:
    """The ``sign`` header: base64 of HMAC-SHA256 (key: the AppSecret) of
    ``timestamp + "\\n" + AppSecret``."""
    digest = hmac.new(
        app_secret.encode(), f"{timestamp}\n{app_secret}".encode(), hashlib.sha256
    ).digest()
    return base64.b64encode(digest).decode()


def sign_problem(
    headers: Mapping[str, str], app_secret: str, now: float | None = None
) -> str | None:
    """Why the request's ``timestamp`` and ``sign`` headers are not DingTalk's; None when they
    are (the timestamp, in milliseconds, within an hour, and the signature right)."""
    stamp = headers.get("timestamp", "")
    if not stamp.isdigit():
        return "missing timestamp header"
    if abs((time.time() if now is None else now) - int(stamp) / 1000) > SIGN_WINDOW_SECONDS:
        return "timestamp more than an hour away"
    if not hmac.compare_digest(headers.get("sign", ""), sign(stamp, app_secret)):
        return "missing or wrong sign header"
    return None


@dataclass(frozen=True)
class Received:
    """One robot message: the gateway's event, and where its answer goes."""

    event: PlatformEvent
    webhook: str
    """The message's ``sessionWebhook``: the answer is POSTed there."""
    webhook_until: float | None
    """When that webhook expires (``sessionWebhookExpiredTime``), seconds since the epoch."""


def received(body: Mapping[str, Any]) -> Received | None:
    """The message in a robot callback body; None when it has no conversation, id, webhook or
    content (nothing for the agent)."""
    kind = str(body.get("msgtype") or "unknown")
    text, attachments = "", [Attachment(f"{kind} message")]
    content = body.get("text")
    if kind == "text" and isinstance(content, dict):
        text, attachments = str(content.get("content") or "").strip(), []
    conversation, message_id = body.get("conversationId"), body.get("msgId")
    webhook = body.get("sessionWebhook")
    if not (isinstance(conversation, str) and conversation and isinstance(webhook, str)):
        return None
    if not isinstance(message_id, str) or not message_id or not (text or attachments):
        return None
    user = body.get("senderStaffId") or body.get("senderId")
    event = PlatformEvent(
        platform="dingtalk",
        chat_id=conversation,
        text=text,
        chat_type="dm" if str(body.get("conversationType")) == "1" else "group",
        user_id=str(user) if user else None,
        message_id=message_id,
        attachments=tuple(attachments),
        user_name=str(body.get("senderNick") or "") or None,
        chat_name=str(body.get("conversationTitle") or "") or None,
        sent_at=_seconds(body.get("createAt")),
    )
    return Received(event, webhook, _seconds(body.get("sessionWebhookExpiredTime")))


def _seconds(milliseconds: object) -> float | None:
    if isinstance(milliseconds, int | str) and str(milliseconds).isdigit():
        return int(milliseconds) / 1000
    return None
