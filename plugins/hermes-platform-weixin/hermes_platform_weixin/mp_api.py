"""The two Official Account API calls the adapter makes, through the adapter kit's
:class:`~hermes_hookspecs.adapter_kit.TokenApi`: the access token (``GET /cgi-bin/token``, asked
again shortly before it expires or when refused) and a customer-service text message to one
user (``POST /cgi-bin/message/custom/send``)."""

from __future__ import annotations

from hermes_hookspecs.adapter_kit import AnswerShape, TokenApi, TokenGrant

TOKEN_REFUSED = frozenset({40001, 40014, 42001})
"""Codes of an access token the platform no longer takes (invalid, expired): ask again."""


def mp_api(base: str, app_id: str, app_secret: str) -> TokenApi:
    """The Official Account API at ``base`` (``https://api.weixin.qq.com``), as one account."""
    credentials = {"grant_type": "client_credential", "appid": app_id, "secret": app_secret}
    return TokenApi(
        base,
        TokenGrant("GET", "/cgi-bin/token", credentials),
        AnswerShape(refused=TOKEN_REFUSED),
        platform="Weixin",
        api_name="the Weixin API",
        secret_setting="gateway.platforms.weixin.app_secret",
    )


async def send_text(api: TokenApi, open_id: str, text: str) -> None:
    """A customer-service text message to the user ``open_id`` (the platform allows it
    within 48 hours of the user's last message)."""
    body = {"touser": open_id, "msgtype": "text", "text": {"content": text}}
    await api.send("/cgi-bin/message/custom/send", body)
