"""signal-cli's daemon HTTP API (``signal-cli daemon --http``, man page signal-cli-jsonrpc):
JSON-RPC calls on ``POST /api/v1/rpc``, incoming messages on the Server-Sent Events stream
``GET /api/v1/events``, and the envelopes in it as gateway events."""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Attachment, PlatformEvent
from hermes_hookspecs.adapter_kit import split_text

if TYPE_CHECKING:
    from aiohttp import ClientSession

log = logging.getLogger("hermes.gateway.signal")

MAX_MESSAGE_CHARS = 2000
"""Signal's long-message threshold (clients send what is past it as an attachment): longer
answers go in several messages."""

STREAM_SILENCE_SECONDS = 60.0
"""How long the event stream may stay silent (keep-alives included) before it is reopened."""


class RpcError(Exception):
    """A JSON-RPC error answer of signal-cli (its ``message`` and ``code``)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


@dataclass(frozen=True)
class StreamEvent:
    """One event of the SSE stream: its ``id`` (None from a daemon that numbers none), its
    type (``receive``) and its JSON ``data``."""

    id: str | None
    kind: str
    data: str


class Daemon:
    """One signal-cli daemon at ``url`` (``account``: the bot's number in multi-account mode)."""

    def __init__(self, session: ClientSession, url: str, account: str | None) -> None:
        self.session, self.url, self.account = session, url.rstrip("/"), account
        self._ids = itertools.count(1)

    async def check(self) -> None:
        """``GET /api/v1/check``: raises when the daemon does not answer 200."""
        async with self.session.get(f"{self.url}/api/v1/check") as answer:
            if answer.status != 200:
                raise RpcError(f"/api/v1/check answered HTTP {answer.status}")

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        """One JSON-RPC request; its ``result``, or :class:`RpcError`."""
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                "params": {**params, **({"account": self.account} if self.account else {})}}  # fmt: skip
        async with self.session.post(f"{self.url}/api/v1/rpc", json=body) as answer:
            try:
                data = await answer.json(content_type=None)
            except ValueError:
                data = None
        if not isinstance(data, dict):
            raise RpcError(f"{method}: HTTP {answer.status} without a JSON-RPC answer")
        error = data.get("error")
        if isinstance(error, dict):
            raise RpcError(str(error.get("message") or error), error.get("code"))
        return data.get("result")

    async def send_text(self, chat_id: str, text: str, *, group: bool) -> str | None:
        """Send ``text`` to a person (number or uuid) or a group (``groupId``), in pieces;
        the ``timestamp`` of the last message (Signal's message id)."""
        sent: str | None = None
        for piece in split_text(text, MAX_MESSAGE_CHARS):
            to = {"groupId": chat_id} if group else {"recipient": [chat_id]}
            result = await self.call("send", {**to, "message": piece})
            if isinstance(result, dict) and result.get("timestamp") is not None:
                sent = str(result["timestamp"])
        return sent

    async def events(self, last_event_id: str | None) -> AsyncIterator[StreamEvent]:
        """The SSE stream from after ``last_event_id`` (the daemon keeps its last events and
        replays those after the id; an unknown id replays all it kept)."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        query = {"account": self.account} if self.account else None
        from aiohttp import ClientTimeout

        # signal-cli writes a keep-alive every 15 s: a minute of silence is a dead connection.
        quiet = ClientTimeout(total=None, sock_read=STREAM_SILENCE_SECONDS)
        async with self.session.get(f"{self.url}/api/v1/events", params=query,
                                    headers=headers, timeout=quiet) as answer:  # fmt: skip
            if answer.status != 200:
                raise RpcError(f"/api/v1/events answered HTTP {answer.status}")
            event_id: str | None = None
            kind, data = "message", list[str]()
            async for raw in answer.content:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line:
                    if data:
                        yield StreamEvent(event_id, kind, "\n".join(data))
                    kind, data = "message", []
                    continue
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if field == "id":
                    event_id = value
                elif field == "event":
                    kind = value
                elif field == "data":
                    data.append(value)


def event_from_envelope(envelope: Mapping[str, Any], own: str | None) -> PlatformEvent | None:
    """The gateway event of a ``receive`` envelope holding a data message with text or
    attachments; None for receipts, typing, sync messages, group updates and our own."""
    message = envelope.get("dataMessage")
    sender = envelope.get("sourceUuid") or envelope.get("sourceNumber") or envelope.get("source")
    if not isinstance(message, dict) or not isinstance(sender, str) or not sender:
        return None
    if own and own in {envelope.get("sourceNumber"), envelope.get("sourceUuid")}:
        return None
    text = message.get("message") if isinstance(message.get("message"), str) else ""
    attachments = tuple(
        Attachment(_label(item), None, item.get("contentType"))
        for item in message.get("attachments") or []
        if isinstance(item, dict)
    )
    if not text and not attachments:
        return None
    group = message.get("groupInfo")
    group_id = group.get("groupId") if isinstance(group, dict) else None
    stamp = envelope.get("timestamp")
    return PlatformEvent(
        platform="signal",
        chat_id=str(group_id) if group_id else sender,
        text=str(text),
        chat_type="group" if group_id else "dm",
        user_id=sender,
        message_id=f"{sender}:{stamp}",
        attachments=attachments,
        sent_at=stamp / 1000 if isinstance(stamp, int | float) else None,
        user_name=envelope.get("sourceName") or envelope.get("sourceNumber") or None,
        chat_name=group.get("groupName") if isinstance(group, dict) else None,
    )


def _label(attachment: Mapping[str, Any]) -> str:
    return f"attachment {attachment.get('filename') or attachment.get('id') or ''}".strip()
