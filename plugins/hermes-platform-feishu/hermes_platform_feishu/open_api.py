"""The Open API calls the adapter makes, through the adapter kit's
:class:`~hermes_hookspecs.adapter_kit.TokenApi`: the app's tenant_access_token (``POST
/open-apis/auth/v3/tenant_access_token/internal``, asked again shortly before it expires or when
Feishu refuses it), then messages sent with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_hookspecs.adapter_kit import AnswerShape, TokenApi, TokenGrant

TOKEN_REFUSED = frozenset({99991663, 99991677})
"""Codes of a tenant token Feishu no longer takes (invalid, expired): ask for a new one."""


def open_api(base: str, app_id: str, app_secret: str) -> TokenApi:
    """The Open API at ``base`` (``https://open.feishu.cn`` or Lark's), as one app."""
    return TokenApi(
        base,
        TokenGrant(
            "POST",
            "/open-apis/auth/v3/tenant_access_token/internal",
            {"app_id": app_id, "app_secret": app_secret},
            token_field="tenant_access_token",
            lifetime_field="expire",
        ),
        AnswerShape(code_field="code", message_field="msg", refused=TOKEN_REFUSED, bearer=True),
        platform="Feishu",
        api_name="the Feishu Open API",
        secret_setting="gateway.platforms.feishu.app_secret",
    )


async def send_data(api: TokenApi, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """POST ``body`` to ``path`` as the app; the answer's ``data``."""
    data = (await api.send(path, body)).get("data")
    return data if isinstance(data, dict) else {}
