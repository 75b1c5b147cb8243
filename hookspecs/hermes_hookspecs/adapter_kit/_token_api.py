"""A platform's JSON API reached with an access token the app is given for its credentials
(Feishu's tenant token, WeCom's and Weixin's access tokens): one aiohttp client, the token
kept until five minutes before it expires and asked for again, once, when the platform refuses
it, every answer checked. The adapter declares ``aiohttp`` itself."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._types import UserFacingError
from ._text import one_line

if TYPE_CHECKING:
    import aiohttp

TOKEN_MARGIN_SECONDS = 300.0
"""A token is asked for again this long before the platform said it expires."""


class ApiRefused(Exception):
    """An answer whose code is not 0: the platform's message and its code, in one line."""

    def __init__(self, code: object, message: object, code_field: str = "code") -> None:
        super().__init__(f"{message} ({code_field} {code})")
        self.code = code


@dataclass(frozen=True)
class TokenGrant:
    """How a platform hands out its token: ``method`` ``GET`` (``credentials`` in the query)
    or ``POST`` (in a JSON body) to ``path``; the token and its lifetime in seconds are the
    answer's ``token_field`` and ``lifetime_field``."""

    method: str
    path: str
    credentials: Mapping[str, str]
    token_field: str = "access_token"
    lifetime_field: str = "expires_in"


@dataclass(frozen=True)
class AnswerShape:
    """Where a platform's answer says how a call went: ``code_field`` (0 is success) and
    ``message_field``; ``refused`` are the codes of a token it no longer takes (invalid,
    expired); ``bearer``: the token goes in an ``Authorization: Bearer`` header, else in the
    query as ``access_token``."""

    code_field: str = "errcode"
    message_field: str = "errmsg"
    refused: frozenset[int] = frozenset()
    bearer: bool = False


class TokenApi:
    """The API at ``base`` as one app (see the module's text). ``platform`` names it in
    messages, ``api_name`` (say ``the WeCom API``) where it cannot be reached or is closed, and
    ``secret_setting`` the setting to blame when the credentials are refused."""

    def __init__(
        self,
        base: str,
        grant: TokenGrant,
        shape: AnswerShape,
        *,
        platform: str,
        api_name: str,
        secret_setting: str,
    ) -> None:
        self.base = base.rstrip("/")
        self._grant, self._shape = grant, shape
        self._platform, self._api_name, self._secret_setting = platform, api_name, secret_setting
        self._http: aiohttp.ClientSession | None = None
        self._token, self._token_until = "", 0.0

    async def open(self) -> None:
        """Start the HTTP client and ask for a token. Refused credentials, or an API out of
        reach, are one line (:class:`~hermes_hookspecs.UserFacingError`)."""
        import aiohttp

        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        try:
            await self.token()
        except BaseException as error:
            await self.close()
            if isinstance(error, ApiRefused):
                problem = f"{self._secret_setting} was refused by {self._platform}: {error}"
            elif isinstance(error, Exception):
                problem = f"cannot reach {self._api_name} at {self.base}: {one_line(error)}"
            else:
                raise
            raise UserFacingError(problem) from None

    async def close(self) -> None:
        """Close the HTTP client (nothing when it is not open)."""
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def token(self) -> str:
        """The token, kept until :data:`TOKEN_MARGIN_SECONDS` before it expires (a minute at
        least)."""
        if self._token and time.monotonic() < self._token_until:
            return self._token
        grant = self._grant
        as_query = grant.method == "GET"
        data = await self._call(
            grant.method,
            grant.path,
            grant.credentials if as_query else None,
            None if as_query else grant.credentials,
            None,
        )
        self._token = str(data.get(grant.token_field) or "")
        lifetime = float(data.get(grant.lifetime_field) or 0)
        self._token_until = time.monotonic() + max(60.0, lifetime - TOKEN_MARGIN_SECONDS)
        return self._token

    async def send(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` with the token; the checked answer (:class:`ApiRefused`
        when its code is not 0). A token the platform no longer takes is asked for again and
        the call made once more."""
        try:
            return await self._send_once(path, body)
        except ApiRefused as error:
            if error.code not in self._shape.refused:
                raise
        self._token = ""
        return await self._send_once(path, body)

    async def _send_once(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        token = await self.token()
        if self._shape.bearer:
            return await self._call("POST", path, None, body, {"Authorization": f"Bearer {token}"})
        return await self._call("POST", path, {"access_token": token}, body, None)

    async def _call(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None,
        body: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
    ) -> dict[str, Any]:
        shape = self._shape
        if self._http is None:
            raise ApiRefused("-", f"{self._api_name} client is closed", shape.code_field)
        # Sent as UTF-8, not ASCII escapes: the user reads the text as the platform has it.
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        sent = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
        async with self._http.request(
            method, self.base + path, params=query, data=payload, headers=sent
        ) as answer:
            data = await answer.json(content_type=None)
        if not isinstance(data, dict) or data.get(shape.code_field, 0) != 0:
            found = data if isinstance(data, dict) else {}
            message = found.get(shape.message_field) or "an answer that is not JSON"
            raise ApiRefused(found.get(shape.code_field), message, shape.code_field)
        return data
