"""The two Official Account API calls the adapter makes, over aiohttp: the access token
(``GET /cgi-bin/token``, asked again shortly before it expires or when refused) and a
customer-service text message to one user (``POST /cgi-bin/message/custom/send``)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import UserFacingError
from hermes_hookspecs.adapter_kit import one_line

if TYPE_CHECKING:
    import aiohttp

TOKEN_REFUSED = frozenset({40001, 40014, 42001})
"""Codes of an access token the platform no longer takes (invalid, expired): ask again."""


class WeixinError(Exception):
    """An answer with a non-zero ``errcode`` (its ``errmsg`` and code in one line)."""

    def __init__(self, code: object, message: object) -> None:
        super().__init__(f"{message} (errcode {code})")
        self.code = code


class MpApi:
    """The Official Account API at ``base`` (``https://api.weixin.qq.com``), as one account."""

    def __init__(self, base: str, app_id: str, app_secret: str) -> None:
        self.base = base.rstrip("/")
        self._credentials = {
            "grant_type": "client_credential",
            "appid": app_id,
            "secret": app_secret,
        }
        self._http: aiohttp.ClientSession | None = None
        self._token, self._token_until = "", 0.0

    async def open(self) -> None:
        """Start the HTTP client and ask for a token: a refused AppSecret, or an API out of
        reach, is one line (:class:`~hermes_hookspecs.UserFacingError`)."""
        import aiohttp

        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        try:
            await self.token()
        except BaseException as error:
            await self.close()
            if isinstance(error, WeixinError):
                problem = f"gateway.platforms.weixin.app_secret was refused by Weixin: {error}"
            elif isinstance(error, Exception):
                problem = f"cannot reach the Weixin API at {self.base}: {one_line(error)}"
            else:
                raise
            raise UserFacingError(problem) from None

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def token(self) -> str:
        """The access token (kept until five minutes before ``expires_in``)."""
        if self._token and time.monotonic() < self._token_until:
            return self._token
        data = await self._call("GET", "/cgi-bin/token", self._credentials, None)
        self._token = str(data.get("access_token") or "")
        self._token_until = time.monotonic() + max(60.0, float(data.get("expires_in") or 0) - 300)
        return self._token

    async def send_text(self, open_id: str, text: str) -> None:
        """A customer-service text message to the user ``open_id`` (the platform allows it
        within 48 hours of the user's last message)."""
        body = {"touser": open_id, "msgtype": "text", "text": {"content": text}}
        for attempt in (1, 2):
            query = {"access_token": await self.token()}
            try:
                await self._call("POST", "/cgi-bin/message/custom/send", query, body)
                return
            except WeixinError as error:
                if error.code not in TOKEN_REFUSED or attempt == 2:
                    raise
                self._token = ""

    async def _call(
        self, method: str, path: str, query: Mapping[str, str], body: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if self._http is None:
            raise WeixinError("-", "the Official Account API client is closed")
        # Sent as UTF-8, not ASCII escapes: the user reads the text as the platform has it.
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json; charset=utf-8"}
        url = self.base + path
        async with self._http.request(
            method, url, params=query, data=payload, headers=headers
        ) as answer:
            data = await answer.json(content_type=None)
        if not isinstance(data, dict) or data.get("errcode", 0) != 0:
            found = data if isinstance(data, dict) else {}
            message = found.get("errmsg") or "an answer that is not JSON"
            raise WeixinError(found.get("errcode"), message)
        return data
