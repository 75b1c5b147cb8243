"""What Feishu sends, read: encrypted callback bodies, their signature, and a received message
as the gateway's event (pure functions over the documented shapes)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from typing import Any

from hermes_hookspecs import Attachment, ChatType, PlatformEvent
from hermes_hookspecs.adapter_kit import WebhookRefused

PLACEHOLDER = re.compile(r"@_user_\d+")
LEADING_MENTIONS = re.compile(r"^\s*(?:@_user_\d+\s*)+")


def decrypt(encrypted: str, encrypt_key: str) -> bytes:
    """An encrypted callback body: base64 of a 16-byte IV followed by AES-256-CBC (the key is
    the SHA-256 of the Encrypt Key), PKCS#7 padded. Raises ValueError when it is not."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    raw = base64.b64decode(encrypted, validate=True)
    if len(raw) < 32 or len(raw) % 16:
        raise ValueError("not an AES-CBC message")
    key = hashlib.sha256(encrypt_key.encode()).digest()
    decryptor = Cipher(algorithms.AES(key), modes.CBC(raw[:16])).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    padded = decryptor.update(raw[16:]) + decryptor.finalize()
    return unpadder.update(padded) + unpadder.finalize()


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """``X-Lark-Signature``: hex SHA-256 of timestamp, nonce, Encrypt Key and the raw body."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()


def event_from_message(event: Mapping[str, Any]) -> PlatformEvent | None:
    """The gateway event of an ``im.message.receive_v1`` event; None for what is not for the
    agent (an app's own message, an empty one)."""
    sender, message = event.get("sender"), event.get("message")
    if not isinstance(sender, dict) or not isinstance(message, dict):
        return None
    if sender.get("sender_type") == "app":
        return None
    ids = sender.get("sender_id")
    ids = ids if isinstance(ids, dict) else {}
    user = ids.get("open_id") or ids.get("user_id") or None
    kind = str(message.get("message_type") or "unknown")
    text, attachments = "", [Attachment(f"{kind} message")]
    if kind == "text":
        try:
            content = json.loads(str(message.get("content") or "{}"))
        except ValueError:
            content = {}
        raw = str(content.get("text") or "") if isinstance(content, dict) else ""
        names = {
            m.get("key"): m.get("name")
            for m in message.get("mentions") or []
            if isinstance(m, dict)
        }
        text = PLACEHOLDER.sub(
            lambda found: f"@{names.get(found[0]) or 'someone'}", LEADING_MENTIONS.sub("", raw)
        )
        attachments = []
    chat_id = str(message.get("chat_id") or "")
    if not chat_id or not (text.strip() or attachments):
        return None
    thread_id = str(message.get("thread_id") or "") or None
    chat_type: ChatType = "dm" if message.get("chat_type") == "p2p" else "group"
    created = str(message.get("create_time") or "")
    return PlatformEvent(
        platform="feishu",
        chat_id=chat_id,
        text=text,
        chat_type="thread" if thread_id and chat_type == "group" else chat_type,
        user_id=str(user) if user else None,
        thread_id=thread_id,
        message_id=str(message.get("message_id") or "") or None,
        attachments=tuple(attachments),
        sent_at=int(created) / 1000 if created.isdigit() else None,
    )


def read_callback(
    body: bytes, headers: Mapping[str, str], token: str, encrypt_key: str | None
) -> dict[str, Any]:
    """A callback's JSON (decrypted with ``encrypt_key``), checked: the Verification Token it
    carries and, for an event when there is an Encrypt Key, ``X-Lark-Signature``. A
    ``url_verification`` comes back as it is; an event has a ``header`` object."""
    try:
        payload = json.loads(body)
        if isinstance(payload, dict) and "encrypt" in payload and encrypt_key:
            payload = json.loads(decrypt(str(payload["encrypt"]), encrypt_key))
    except (ValueError, TypeError):
        raise WebhookRefused(400, "a body that is not JSON (or does not decrypt)") from None
    if not isinstance(payload, dict):
        raise WebhookRefused(400, "the body must be a JSON object")
    verifying = payload.get("type") == "url_verification"
    header = payload.get("header")
    header = header if isinstance(header, dict) else {}
    carried = payload.get("token") if verifying else header.get("token")
    if not isinstance(carried, str) or not hmac.compare_digest(carried, token):
        raise WebhookRefused(401, "missing or wrong verification token")
    if verifying:
        return payload
    if encrypt_key:
        stamp = headers.get("X-Lark-Request-Timestamp", "")
        expected = signature(stamp, headers.get("X-Lark-Request-Nonce", ""), encrypt_key, body)
        if not hmac.compare_digest(headers.get("X-Lark-Signature", ""), expected):
            raise WebhookRefused(401, "missing or wrong X-Lark-Signature")
    return {**payload, "header": header}
