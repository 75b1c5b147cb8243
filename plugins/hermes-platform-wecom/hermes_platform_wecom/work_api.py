"""The two WeCom API calls the adapter makes, over aiohttp: the application's access token
(``GET /cgi-bin/gettoken``, asked again shortly before it expires or when WeCom refuses it) and
a text message to one member (``POST /cgi-bin/message/send``)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp

TOKEN_REFUSED = frozenset({40001, 40014, 42001})
"""Codes of an access token WeCom no longer takes (invalid, expired): ask for a new one."""


class WeComError(Exception):
    """An answer whose ``errcode`` is not 0 (its ``errmsg`` and code in one line)."""

    def __init__(self, code: object, message: object) -> None:
        super().__init__(f"{message} (errcode {code})")
        self.code = code


class WorkApi:
    """The WeCom API at ``base`` (``https://qyapi.weixin.qq.com``), as one application."""

    def __init__(self, base: str, corp_id: str, secret: str, agent_id: str) -> None:
        self.base, self.agent_id = base.rstrip("/"), agent_id
        self._credentials = {"corpid": corp_id, "corpsecret": secret}
        self._http: aiohttp.ClientSession | None = None
        self._token, self._token_until = "", 0.0

    async def open(self) -> None:
        """Start the HTTP client and ask for a token (:class:`WeComError` when refused)."""
        import aiohttp

        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        try:
            await self.token()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def token(self) -> str:
        """The access token (kept until five minutes before ``expires_in``)."""
        if self._token and time.monotonic() < self._token_until:
            return self._token
        data = await self._call("GET", "/cgi-bin/gettoken", self._credentials, None)
        self._token = str(data.get("access_token") or "")
        self._token_until = time.monotonic() + max(60.0, float(data.get("expires_in") or 0) - 300)
        return self._token

    async def send_text(self, user_id: str, text: str) -> str | None:
        """Send ``text`` to the member ``user_id`` as the application; WeCom's ``msgid``."""
        body = {
            "touser": user_id,
            "msgtype": "text",
            "agentid": int(self.agent_id) if self.agent_id.isdigit() else self.agent_id,
            "text": {"content": text},
        }
        for attempt in (1, 2):
            query = {"access_token": await self.token()}
            try:
                data = await self._call("POST", "/cgi-bin/message/send", query, body)
            except WeComError as error:
                if error.code not in TOKEN_REFUSED or attempt == 2:
                    raise
                self._token = ""
                continue
            return str(data.get("msgid") or "") or None
        return None

    async def _call(
        self, method: str, path: str, query: Mapping[str, str], body: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if self._http is None:
            raise WeComError("-", "the WeCom API client is closed")
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
            raise WeComError(
                found.get("errcode"), found.get("errmsg") or "an answer that is not JSON"
            )
        return data
