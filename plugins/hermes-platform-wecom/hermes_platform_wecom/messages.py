"""What WeCom POSTs to a self-built application's callback URL, read: the XML envelope, the
encrypted message inside it (checked and decrypted), and a received message as the gateway's
event (pure functions over the documented shapes)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping

from hermes_hookspecs import Attachment, PlatformEvent
from hermes_hookspecs.adapter_kit import WebhookRefused

from .crypto import CryptoError, decrypt, signed


def xml_fields(body: bytes) -> dict[str, str]:
    """The child elements of an ``<xml>`` document by name (their text); :class:`WebhookRefused` for
    what is not one. A document type (and so any entity) is refused before parsing: it can
    only stand before the root element."""
    start = body.find(b"<xml")
    if start < 0 or b"<!" in body[:start]:
        raise WebhookRefused(400, "a body that is not an <xml> message without a document type")
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        raise WebhookRefused(400, "a body that is not XML") from None
    if root.tag != "xml":
        raise WebhookRefused(400, "a body that is not an <xml> message")
    return {child.tag: child.text or "" for child in root}


def opened(query: Mapping[str, str], encrypted: str, token: str, key: bytes, corp_id: str) -> bytes:
    """The plaintext of ``encrypted``, once ``msg_signature`` (over the token, ``timestamp``,
    ``nonce`` and the encrypted text) is right and the CorpID at its end is ours."""
    timestamp, nonce = query.get("timestamp", ""), query.get("nonce", "")
    if not encrypted or not signed(
        query.get("msg_signature", ""), token, timestamp, nonce, encrypted
    ):
        raise WebhookRefused(401, "missing or wrong msg_signature")
    try:
        message, receiver = decrypt(encrypted, key)
    except CryptoError as error:
        raise WebhookRefused(400, f"a message that does not decrypt ({error})") from None
    if receiver != corp_id:
        raise WebhookRefused(401, "a message for another CorpID")
    return message


def event_from_message(fields: Mapping[str, str], agent_id: str) -> PlatformEvent | None:
    """The gateway event of a decrypted message; None for what is not for the agent (an
    event such as a subscription or a menu click, another application's message, no id)."""
    kind = fields.get("MsgType", "")
    sender, message_id = fields.get("FromUserName", ""), fields.get("MsgId", "")
    if kind in {"", "event"} or not sender or not message_id:
        return None
    if fields.get("AgentID", agent_id).strip() != agent_id:
        return None
    text, attachments = "", [Attachment(f"{kind} message")]
    if kind == "text":
        text, attachments = fields.get("Content", "").strip(), []
        if not text:
            return None
    created = fields.get("CreateTime", "")
    return PlatformEvent(
        platform="wecom",
        chat_id=sender,
        text=text,
        chat_type="dm",
        user_id=sender,
        message_id=message_id,
        attachments=tuple(attachments),
        sent_at=float(created) if created.isdigit() else None,
    )
