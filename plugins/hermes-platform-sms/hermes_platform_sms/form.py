"""What Twilio posts for an incoming SMS (``application/x-www-form-urlencoded``), read into a
gateway event. The fields used: ``From`` (the sender), ``To`` (our number), ``Body``,
``MessageSid``, ``NumMedia`` with ``MediaUrl<N>`` / ``MediaContentType<N>`` (an MMS)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from hermes_hookspecs import Attachment, PlatformEvent

from .numbers import canonical_number


class TwilioForm(dict[str, list[str]]):
    """A form body: every value of every field, as ``RequestValidator`` signs them."""

    def getall(self, name: str) -> list[str]:
        """Every value of ``name`` (what the validator asks a multi-valued mapping)."""
        return self[name]

    def first(self, name: str) -> str:
        """The first value of ``name``; empty when absent."""
        return (self.get(name) or [""])[0]


def parse_form(body: bytes) -> TwilioForm:
    """A form body; ValueError (UnicodeDecodeError too) when it is not one."""
    form = TwilioForm()
    pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
    for name, value in pairs:
        form.setdefault(name, []).append(value)
    return form


def event_from_form(form: TwilioForm) -> PlatformEvent:
    """The gateway event of one incoming SMS; ValueError without a sender."""
    sender = canonical_number(form.first("From"))
    if not sender:
        raise ValueError("no 'From' number")
    count = form.first("NumMedia")
    attachments = tuple(
        Attachment(
            f"media {form.first(f'MediaUrl{index}')}",
            None,
            form.first(f"MediaContentType{index}") or None,
        )
        for index in range(min(int(count), 10) if count.isdigit() else 0)
    )
    return PlatformEvent(
        platform="sms",
        chat_id=sender,
        text=form.first("Body"),
        chat_type="dm",
        user_id=sender,
        message_id=form.first("MessageSid") or None,
        attachments=attachments,
    )
