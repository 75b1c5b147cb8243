"""Mattermost's REST API v4 as the adapter uses it: who the bot is, new posts, posts since a
time. aiohttp, the token as ``Authorization: Bearer``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import UserFacingError
from hermes_hookspecs.adapter_kit import one_line, split_text

from .posts import created_ms

if TYPE_CHECKING:
    import aiohttp

MESSAGE_CHARS = 16383
"""The longest post Mattermost accepts (in characters); longer answers are split."""


class ApiError(Exception):
    """Mattermost answered an error status (its ``message`` as the text)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class MattermostRest:
    """One server, one token: ``open`` before the calls, ``close`` after."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.http: aiohttp.ClientSession | None = None

    @property
    def socket_url(self) -> str:
        """The WebSocket's address (``ws://`` or ``wss://`` as the server's is secure)."""
        return "ws" + self.url.removeprefix("http") + "/api/v4/websocket"

    def open(self) -> aiohttp.ClientSession:
        """The HTTP session the calls (and the WebSocket) go through."""
        import aiohttp

        if self.http is None:
            self.http = aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=aiohttp.ClientTimeout(total=60),
            )
        return self.http

    async def close(self) -> None:
        """Close the HTTP session."""
        if self.http is not None:
            await self.http.close()
            self.http = None

    async def me(self) -> tuple[str, str]:
        """``GET /users/me``: the bot's id and username; one line when the token is refused
        or the server cannot be reached (the HTTP session is closed then)."""
        try:
            answer = await self.call("GET", "/users/me")
        except ApiError as error:
            await self.close()
            if error.status == 401:
                raise UserFacingError(
                    f"gateway.platforms.mattermost.token was refused by Mattermost ({error})"
                ) from None
            raise UserFacingError(f"mattermost: {self.url} answered {error}") from None
        except Exception as error:
            await self.close()
            raise UserFacingError(
                f"cannot reach Mattermost at {self.url}: {one_line(error)}"
            ) from None
        return str(answer.get("id") or ""), str(answer.get("username") or "")

    async def authenticate(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        """Send the WebSocket's ``authentication_challenge`` (the upgrade's header already
        carries the token; older servers want the challenge)."""
        challenge = {"seq": 1, "action": "authentication_challenge", "data": {"token": self.token}}
        await socket.send_json(challenge)

    async def post(self, channel: str, text: str, root: str | None = None) -> str | None:
        """``POST /posts`` (in the thread ``root``), split at :data:`MESSAGE_CHARS`; the last
        post's id."""
        last: str | None = None
        for piece in split_text(text, MESSAGE_CHARS):
            body = {"channel_id": channel, "message": piece, **({"root_id": root} if root else {})}
            answer = await self.call("POST", "/posts", json=body)
            last = str(answer.get("id") or "") or None
        return last

    async def posts_since(self, channel: str, since: int, but: str = "") -> list[dict[str, Any]]:
        """``GET /channels/{id}/posts?since=``: the posts created at ``since`` (ms) or later
        (the API also returns older posts edited since) except the one whose id is ``but``,
        oldest first."""
        page = await self.call("GET", f"/channels/{channel}/posts",
                               params={"since": str(since - 1)})  # fmt: skip
        posts = page.get("posts") if isinstance(page, dict) else None
        found = [p for p in (posts or {}).values() if isinstance(p, dict)]
        found = [p for p in found if created_ms(p) >= since and p.get("id") != but]
        return sorted(found, key=lambda p: (created_ms(p), str(p.get("id"))))

    async def call(self, method: str, path: str, **options: Any) -> Any:
        """One call; its JSON answer, :class:`ApiError` for an error status."""
        http = self.open()
        async with http.request(method, f"{self.url}/api/v4{path}", **options) as response:
            raw = await response.text()
            try:
                data = json.loads(raw) if raw else {}
            except ValueError:
                data = {}
            if response.status >= 400:
                message = data.get("message") if isinstance(data, dict) else None
                raise ApiError(response.status, one_line(message or response.reason or "error"))
            return data
