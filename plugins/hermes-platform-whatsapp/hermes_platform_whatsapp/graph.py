"""The Graph API calls of the Cloud API the adapter makes: check the number, send a text,
mark a message read."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs.adapter_kit import retry_transient, split_text

if TYPE_CHECKING:
    from aiohttp import ClientSession

log = logging.getLogger("hermes.gateway.whatsapp")

MAX_MESSAGE_CHARS = 4096
"""The Cloud API refuses a longer text body; longer answers go in several messages."""


class GraphError(Exception):
    """An error answer of the Graph API (its ``error.message``, the HTTP status)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


class GraphClient:
    """One business number's Graph API (``{base_url}/{api_version}/{phone_number_id}``)."""

    def __init__(
        self, session: ClientSession, base_url: str, version: str, number_id: str, token: str
    ) -> None:
        self.session, self.number_id = session, number_id
        self.root = f"{base_url.rstrip('/')}/{version}"
        self._headers = {"Authorization": f"Bearer {token}"}

    async def call(
        self, method: str, path: str, body: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """One call with the bearer token; its JSON object, or :class:`GraphError`."""
        url = f"{self.root}/{path}"
        async with self.session.request(method, url, json=body, headers=self._headers) as answer:
            try:
                data = await answer.json(content_type=None)
            except ValueError:
                data = None
            if answer.status >= 400 or not isinstance(data, dict):
                error = data.get("error") if isinstance(data, dict) else None
                message = error.get("message") if isinstance(error, dict) else None
                raise GraphError(str(message or f"HTTP {answer.status}"), answer.status)
            return data

    async def number(self) -> dict[str, Any]:
        """The business number (``display_phone_number``…): checks the token and the id."""
        return await self.call("GET", f"{self.number_id}?fields=display_phone_number")

    async def mark_read(self, message_id: str) -> None:
        """Mark an incoming message read (blue ticks)."""
        body = {"messaging_product": "whatsapp", "status": "read", "message_id": message_id}
        await self.call("POST", f"{self.number_id}/messages", body)

    async def send_text(
        self, to: str, text: str, *, group: bool, reply_to: str | None = None
    ) -> str | None:
        """Send ``text`` to a ``wa_id`` (or a ``group_id``) in pieces of 4096 characters, the
        first one a reply to ``reply_to``; the id of the last message sent."""
        sent: str | None = None
        for number, piece in enumerate(split_text(text, MAX_MESSAGE_CHARS)):
            message: dict[str, Any] = {
                "messaging_product": "whatsapp",
                "recipient_type": "group" if group else "individual",
                "to": to,
                "type": "text",
                "text": {"body": piece, "preview_url": False},
            }
            if reply_to is not None and number == 0:
                message["context"] = {"message_id": reply_to}

            async def post(message: dict[str, Any] = message) -> dict[str, Any]:
                return await self.call("POST", f"{self.number_id}/messages", message)

            answer = await retry_transient(post, transient=transient, log=log,
                                           what=f"whatsapp: sending to {to}")  # fmt: skip
            ids = [m.get("id") for m in answer.get("messages") or [] if isinstance(m, dict)]
            sent = str(ids[0]) if ids and ids[0] else sent
        return sent


def transient(error: BaseException) -> bool:
    """Rate limits, server errors and broken connections are worth another try."""
    import aiohttp

    if isinstance(error, GraphError):
        return error.status == 429 or error.status >= 500
    return isinstance(error, aiohttp.ClientConnectionError | TimeoutError)
