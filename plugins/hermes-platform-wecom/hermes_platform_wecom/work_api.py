"""The two WeCom API calls the adapter makes, through the adapter kit's
:class:`~hermes_hookspecs.adapter_kit.TokenApi`: the application's access token (``GET
/cgi-bin/gettoken``, asked again shortly before it expires or when WeCom refuses it) and a text
message to one member (``POST /cgi-bin/message/send``)."""

from __future__ import annotations

from hermes_hookspecs.adapter_kit import AnswerShape, TokenApi, TokenGrant

TOKEN_REFUSED = frozenset({40001, 40014, 42001})
"""Codes of an access token WeCom no longer takes (invalid, expired): ask for a new one."""


def work_api(base: str, corp_id: str, secret: str) -> TokenApi:
    """The WeCom API at ``base`` (``https://qyapi.weixin.qq.com``), as one application."""
    return TokenApi(
        base,
        TokenGrant("GET", "/cgi-bin/gettoken", {"corpid": corp_id, "corpsecret": secret}),
        AnswerShape(refused=TOKEN_REFUSED),
        platform="WeCom",
        api_name="the WeCom API",
        secret_setting="gateway.platforms.wecom.corp_secret",
    )


async def send_text(api: TokenApi, agent_id: str, user_id: str, text: str) -> str | None:
    """Send ``text`` to the member ``user_id`` as the application ``agent_id``; WeCom's
    ``msgid``."""
    body = {
        "touser": user_id,
        "msgtype": "text",
        "agentid": int(agent_id) if agent_id.isdigit() else agent_id,
        "text": {"content": text},
    }
    data = await api.send("/cgi-bin/message/send", body)
    return str(data.get("msgid") or "") or None
