"""What the WhatsApp Business Cloud API sends to a webhook: its signature, and the messages in
it as gateway events."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Mapping
from typing import Any

from hermes_hookspecs import Attachment, PlatformEvent

SIGNATURE_HEADER = "X-Hub-Signature-256"
MEDIA_TYPES = frozenset({"image", "video", "audio", "document", "sticker"})
SKIPPED_TYPES = frozenset({"reaction", "system", "unsupported", "ephemeral", "request_welcome"})
"""Message types that are not a turn for the agent (a reaction, a number change, a message
the Cloud API cannot show)."""


def signature_ok(app_secret: str, body: bytes, header: str | None) -> bool:
    """True when ``header`` is ``sha256=`` and the HMAC-SHA256 of the raw body with the app
    secret, as Meta signs every webhook POST."""
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(app_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256=").strip().lower())


def events_of(payload: Any, phone_number_id: str) -> Iterator[PlatformEvent]:
    """The incoming messages of a ``whatsapp_business_account`` notification sent to our
    number, in order; status updates, other numbers' messages and unknown shapes are skipped."""
    if not isinstance(payload, dict) or payload.get("object") != "whatsapp_business_account":
        return
    for entry in _dicts(payload.get("entry")):
        for change in _dicts(entry.get("changes")):
            value = change.get("value")
            if change.get("field") != "messages" or not isinstance(value, dict):
                continue
            metadata = _dict(value.get("metadata"))
            if str(metadata.get("phone_number_id", "")) != phone_number_id:
                continue
            contacts = list(_dicts(value.get("contacts")))
            for message in _dicts(value.get("messages")):
                event = event_from_message(message, contacts)
                if event is not None:
                    yield event


def canonical_sender(sender: str, contacts: list[dict[str, Any]]) -> tuple[str, str | None]:
    """The sender's canonical identifier (SPEC G1) and profile name: the contact's ``wa_id``
    (the WhatsApp user id Meta says to reply to, which may differ from the number in ``from``),
    else ``from`` itself."""
    for contact in contacts:
        if str(contact.get("wa_id", "")) == sender:
            return sender, _name(contact)
    if len(contacts) == 1 and contacts[0].get("wa_id"):
        return str(contacts[0]["wa_id"]), _name(contacts[0])
    return sender, None


def event_from_message(
    message: Mapping[str, Any], contacts: list[dict[str, Any]]
) -> PlatformEvent | None:
    """The gateway event of one incoming message; None when it has no sender or id, or is
    not a turn (a reaction, a system message). A tapped button is its title as text."""
    sender, message_id = message.get("from"), message.get("id")
    if not isinstance(sender, str) or not sender or not isinstance(message_id, str):
        return None
    wa_id, name = canonical_sender(sender, contacts)
    kind = str(message.get("type", ""))
    if kind in SKIPPED_TYPES:
        return None
    body = _dict(message.get(kind))
    text = str(body.get("body") or "") if kind == "text" else str(body.get("caption") or "")
    if kind == "button":
        text = str(body.get("text") or "")
    elif kind == "interactive":
        choice = _dict(body.get("button_reply") or body.get("list_reply"))
        text = str(choice.get("title") or "")
    attachments: tuple[Attachment, ...] = ()
    if kind in MEDIA_TYPES:
        label = body.get("filename") or body.get("id") or ""
        attachments = (Attachment(f"{kind} {label}".strip(), None, body.get("mime_type")),)
    elif kind not in {"text", "button", "interactive", ""}:
        attachments = (Attachment(f"{kind} message", None, None),)
    if not text and not attachments:
        return None
    group = message.get("group_id")
    stamp = message.get("timestamp")
    return PlatformEvent(
        platform="whatsapp",
        chat_id=str(group) if group else wa_id,
        text=text,
        chat_type="group" if group else "dm",
        user_id=wa_id,
        message_id=message_id,
        attachments=attachments,
        sent_at=float(stamp) if isinstance(stamp, str) and stamp.isdigit() else None,
        user_name=name,
    )


def _name(contact: Mapping[str, Any]) -> str | None:
    profile = contact.get("profile")
    return str(profile["name"]) if isinstance(profile, dict) and profile.get("name") else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, dict))
