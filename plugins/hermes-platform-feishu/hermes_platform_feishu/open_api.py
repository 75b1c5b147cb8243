"""The three Open API calls the adapter makes, over aiohttp: the app's tenant_access_token
(asked again shortly before it expires), then messages sent and replied with it."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp


TOKEN_REFUSED = frozenset({99991663, 99991677})
"""Codes of a tenant token Feishu no longer takes (invalid, expired): ask for a new one."""


class FeishuError(Exception):
    """An Open API answer whose ``code`` is not 0 (its ``msg`` and code in one line)."""

    def __init__(self, code: object, message: object) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code


class OpenApi:
    """The Open API at ``base`` (``https://open.feishu.cn`` or Lark's), as one app."""

    def __init__(self, base: str, app_id: str, app_secret: str) -> None:
        self.base, self._app = base.rstrip("/"), {"app_id": app_id, "app_secret": app_secret}
        self._http: aiohttp.ClientSession | None = None
        self._token, self._token_until = "", 0.0

    async def open(self) -> None:
        """Start the HTTP client and ask for a token (:class:`FeishuError` when refused)."""
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
        """The tenant_access_token (``POST /open-apis/auth/v3/tenant_access_token/internal``)."""
        if self._token and time.monotonic() < self._token_until:
            return self._token
        data = await self._post("/open-apis/auth/v3/tenant_access_token/internal", self._app, {})
        self._token = str(data.get("tenant_access_token") or "")
        self._token_until = time.monotonic() + max(60.0, float(data.get("expire") or 0) - 300)
        return self._token

    async def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` as the app; the answer's ``data`` (once more with a new
        token when Feishu no longer takes the one kept)."""
        try:
            answer = await self._post(path, body, {"Authorization": f"Bearer {await self.token()}"})
        except FeishuError as error:
            if error.code not in TOKEN_REFUSED:
                raise
            self._token = ""
            answer = await self._post(path, body, {"Authorization": f"Bearer {await self.token()}"})
        data = answer.get("data")
        return data if isinstance(data, dict) else {}

    async def _post(
        self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]
    ) -> dict[str, Any]:
        if self._http is None:
            raise FeishuError("-", "the Open API client is closed")
        async with self._http.post(self.base + path, json=body, headers=headers) as answer:
            data = await answer.json(content_type=None)
        if not isinstance(data, dict) or data.get("code") != 0:
            found = data if isinstance(data, dict) else {}
            raise FeishuError(found.get("code"), found.get("msg") or "an answer that is not JSON")
        return data
