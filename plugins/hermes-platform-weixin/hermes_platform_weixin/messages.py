"""What the Official Account platform POSTs to the server URL, read — the ``signature`` query,
the XML message, in safe mode its encryption — and a passive reply written (pure functions over
the documented shapes)."""

from __future__ import annotations

import os
import re
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping

from hermes_hookspecs import Attachment, PlatformEvent
from hermes_hookspecs.adapter_kit import WebhookRefused

from .safe_mode import SafeMode, SafeModeError, sha1_signature, signature_matches

NOT_XML_CHARACTERS = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry: left out of a passive reply."""


def check_signature(query: Mapping[str, str], token: str) -> None:
    """:class:`WebhookRefused` unless ``signature`` is the SHA-1 of the sorted token, ``timestamp``
    and ``nonce`` (every request from the platform carries it, the URL check too)."""
    stamp, nonce = query.get("timestamp", ""), query.get("nonce", "")
    if not stamp or not signature_matches(query.get("signature", ""), token, stamp, nonce):
        raise WebhookRefused(401, "missing or wrong signature")


def xml_fields(body: bytes) -> dict[str, str]:
    """The child elements of an ``<xml>`` document by name (their text); :class:`WebhookRefused` for
    what is not one. A document type (so any entity) can only stand before the root element
    and is refused there, before parsing."""
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


def read_message(
    query: Mapping[str, str], body: bytes, token: str, safe: SafeMode | None
) -> tuple[dict[str, str], bool]:
    """The message's fields, and whether it came encrypted (its reply must be too), once the
    signature — and in safe mode ``msg_signature`` and the AppID inside — are right."""
    check_signature(query, token)
    fields = xml_fields(body)
    if query.get("encrypt_type", "raw") != "aes":
        return fields, False
    if safe is None:
        raise WebhookRefused(400, "an encrypted message, and no encoding_aes_key is set")
    encrypted = fields.get("Encrypt", "")
    stamp, nonce = query.get("timestamp", ""), query.get("nonce", "")
    if not encrypted or not signature_matches(
        query.get("msg_signature", ""), token, stamp, nonce, encrypted
    ):
        raise WebhookRefused(401, "missing or wrong msg_signature")
    try:
        return xml_fields(safe.open(encrypted)), True
    except SafeModeError as error:
        raise WebhookRefused(401 if "AppID" in str(error) else 400, str(error)) from None


def event_from_message(fields: Mapping[str, str]) -> PlatformEvent | None:
    """The gateway event of a user's message; None for what is not for the agent (an event
    such as a subscription or a menu click, a message without a ``MsgId``). A voice message
    with the platform's ``Recognition`` carries that text beside its attachment line."""
    kind = fields.get("MsgType", "")
    sender, message_id = fields.get("FromUserName", ""), fields.get("MsgId", "")
    if kind in {"", "event"} or not sender or not message_id:
        return None
    text, attachments = "", [Attachment(f"{kind} message")]
    if kind == "text":
        text, attachments = fields.get("Content", "").strip(), []
        if not text:
            return None
    elif kind == "voice" and fields.get("Recognition", "").strip():
        text = fields["Recognition"].strip()  # the platform's speech recognition, when on
    created = fields.get("CreateTime", "")
    return PlatformEvent(
        platform="weixin",
        chat_id=sender,
        text=text,
        chat_type="dm",
        user_id=sender,
        message_id=message_id,
        attachments=tuple(attachments),
        sent_at=float(created) if created.isdigit() else None,
    )


def text_reply(to_user: str, account: str, text: str, safe: SafeMode | None, token: str) -> bytes:
    """A passive text reply to ``to_user`` from the account (its original id, the message's
    ``ToUserName``), encrypted and signed when ``safe`` is given."""
    stamp = str(int(time.time()))
    plain = (
        f"<xml><ToUserName>{_cdata(to_user)}</ToUserName><FromUserName>{_cdata(account)}"
        f"</FromUserName><CreateTime>{stamp}</CreateTime><MsgType>{_cdata('text')}</MsgType>"
        f"<Content>{_cdata(text)}</Content></xml>"
    )
    if safe is None:
        return plain.encode()
    encrypted, nonce = safe.seal(plain.encode()), os.urandom(5).hex()
    signature = sha1_signature(token, stamp, nonce, encrypted)
    return (
        f"<xml><Encrypt>{_cdata(encrypted)}</Encrypt><MsgSignature>{_cdata(signature)}"
        f"</MsgSignature><TimeStamp>{stamp}</TimeStamp><Nonce>{_cdata(nonce)}</Nonce></xml>"
    ).encode()


def _cdata(text: str) -> str:
    clean = NOT_XML_CHARACTERS.sub("", text)
    return "<![CDATA[" + clean.replace("]]>", "]]]]><![CDATA[>") + "]]>"
