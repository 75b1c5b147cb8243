"""The QQ Bot open platform's HTTP API, as far as the adapter uses it: the app access token
(``POST getAppAccessToken`` with ``appId`` and ``clientSecret``) and messages to a user or a
group (``POST /v2/users/{openid}/messages``, ``POST /v2/groups/{group_openid}/messages``,
``Authorization: QQBot <token>``)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import aiohttp
from hermes_hookspecs import UserFacingError
from hermes_hookspecs.adapter_kit import one_line, split_text

MAX_MESSAGE_CHARS = 2000
"""The longest text this adapter posts in one message; longer answers go in several."""


class QQApi:
    """Calls to the QQ Bot API over one aiohttp session (open it inside the running loop)."""

    def __init__(self, app_id: str, secret: str, api_base: str, token_url: str) -> None:
        self.app_id, self._secret = app_id, secret
        self.api_base, self.token_url = api_base.rstrip("/"), token_url
        self._client = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        self._token: tuple[str, float] | None = None

    async def close(self) -> None:
        await self._client.close()

    async def access_token(self) -> str:
        """The app access token, fetched again a minute before it expires; one line when QQ
        refuses the AppID and AppSecret."""
        if self._token is not None and time.monotonic() < self._token[1]:
            return self._token[0]
        body = {"appId": self.app_id, "clientSecret": self._secret}
        answer = await self._call(self.token_url, body, {})
        token, expires = answer.get("access_token"), answer.get("expires_in", 7200)
        if not isinstance(token, str) or not token:
            reason = one_line(answer.get("message") or answer)
            raise UserFacingError(f"QQ refused the app credentials: {reason}")
        self._token = (token, time.monotonic() + max(float(expires) - 60, 1))
        return token

    async def post_text(self, kind: str, openid: str, text: str, msg_id: str | None) -> None:
        """``text`` to a user (``kind`` ``dm``) or a group, in pieces; a passive reply to
        ``msg_id`` when given (``msg_seq`` 1, 2… tell its pieces apart)."""
        where = "groups" if kind == "group" else "users"
        url = f"{self.api_base}/v2/{where}/{openid}/messages"
        for seq, piece in enumerate(split_text(text, MAX_MESSAGE_CHARS), start=1):
            body: dict[str, Any] = {"content": piece, "msg_type": 0, "msg_seq": seq}
            if msg_id is not None:
                body["msg_id"] = msg_id
            token = await self.access_token()
            headers = {"Authorization": f"QQBot {token}", "X-Union-Appid": self.app_id}
            await self._call(url, body, headers)

    async def _call(self, url: str, body: Any, headers: Mapping[str, str]) -> dict[str, Any]:
        try:
            async with self._client.post(url, json=body, headers=headers) as response:
                text, status = await response.text(), response.status
        except (aiohttp.ClientError, TimeoutError) as error:
            raise UserFacingError(f"QQ API {url} unreachable: {one_line(error)}") from None
        try:
            answer = json.loads(text) if text else {}
        except ValueError:
            answer = {"message": text}
        if status >= 300 or not isinstance(answer, dict):
            message = answer.get("message") if isinstance(answer, dict) else text
            raise UserFacingError(f"QQ API answered HTTP {status}: {one_line(message)}")
        return answer
