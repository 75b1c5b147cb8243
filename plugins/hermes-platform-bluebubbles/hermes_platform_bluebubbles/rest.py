"""The BlueBubbles server's REST API as the adapter uses it (``/api/v1``, the server password
as the ``password`` query parameter, answers ``{"status", "message", "data"}``)."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import UserFacingError
from hermes_hookspecs.adapter_kit import one_line, split_text

from .messages import created_ms

if TYPE_CHECKING:
    import aiohttp

MESSAGE_CHARS = 10000
"""Longer answers go as several messages (iMessage has no documented limit; long bubbles are
hard to read and slow to send)."""
PAGE = 500


class ApiError(Exception):
    """The server answered an error status (its ``message`` and error as the text)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class BlueBubblesRest:
    """One server and its password: calls made through one aiohttp session."""

    def __init__(self, url: str, password: str) -> None:
        self.url = url.rstrip("/")
        self.password = password
        self.http: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        """Close the HTTP session."""
        if self.http is not None:
            await self.http.close()
            self.http = None

    async def ping(self) -> None:
        """``GET /ping``; one line when the password is refused or the server is unreachable
        (the HTTP session is closed then)."""
        try:
            await self.call("GET", "/ping")
        except ApiError as error:
            await self.close()
            if error.status == 401:
                raise UserFacingError(
                    f"gateway.platforms.bluebubbles.password was refused by BlueBubbles ({error})"
                ) from None
            raise UserFacingError(f"bluebubbles: {self.url} answered {error}") from None
        except Exception as error:
            await self.close()
            raise UserFacingError(
                f"cannot reach the BlueBubbles server at {self.url}: {one_line(error)}"
            ) from None

    async def send_text(self, chat_guid: str, text: str) -> str | None:
        """``POST /message/text`` (AppleScript, a fresh ``tempGuid`` per piece), split at
        :data:`MESSAGE_CHARS`; the last message's guid."""
        last: str | None = None
        for piece in split_text(text, MESSAGE_CHARS):
            body = {"chatGuid": chat_guid, "tempGuid": f"hermes-{uuid.uuid4()}",
                    "message": piece, "method": "apple-script"}  # fmt: skip
            data = await self.call("POST", "/message/text", json=body)
            last = (str(data.get("guid") or "") or None) if isinstance(data, dict) else None
        return last

    async def messages_after(self, after: int, but: str = "") -> list[dict[str, Any]]:
        """``POST /message/query``: every message created after ``after`` (ms) except the
        one whose guid is ``but``, oldest first, with its chats and handle (paged)."""
        found: list[dict[str, Any]] = []
        while True:
            body = {"after": after, "sort": "ASC", "limit": PAGE, "offset": len(found),
                    "with": ["chat", "handle"]}  # fmt: skip
            page = await self.call("POST", "/message/query", json=body)
            batch = [m for m in page if isinstance(m, dict)] if isinstance(page, list) else []
            found.extend(batch)
            if len(batch) < PAGE:
                return sorted((m for m in found if m.get("guid") != but), key=created_ms)

    async def call(self, method: str, path: str, **options: Any) -> Any:
        """One call; its ``data``, :class:`ApiError` for an error status."""
        import aiohttp

        if self.http is None:
            self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        params = {"password": self.password}
        url = f"{self.url}/api/v1{path}"
        async with self.http.request(method, url, params=params, **options) as response:
            raw = await response.text()
            try:
                answer = json.loads(raw) if raw else {}
            except ValueError:
                answer = {}
            if response.status >= 400:
                error = answer.get("error") if isinstance(answer, dict) else None
                detail = error.get("error") if isinstance(error, dict) else None
                message = answer.get("message") if isinstance(answer, dict) else None
                what = ": ".join(str(x) for x in (message, detail) if x) or response.reason
                raise ApiError(response.status, one_line(what or "error"))
            return answer.get("data") if isinstance(answer, dict) else None
