"""The built-in session origins of SPEC O1, registered through the same hook plugins use."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import SessionSource, SourceInfo, hookimpl

_GATEWAY = {"gateway": True}
_THREADED = {"gateway": True, "supports_threads": True}

BUILTIN_SOURCES: tuple[SourceInfo, ...] = (
    SourceInfo("cli", "Interactive CLI", "cli", interactive=True, reapable=True),
    SourceInfo("telegram", "Telegram", "tele", interactive=True, **_THREADED),
    SourceInfo("discord", "Discord", "disc", interactive=True, **_THREADED),
    SourceInfo("slack", "Slack", "slack", interactive=True, **_THREADED),
    SourceInfo("whatsapp", "WhatsApp", "wa", interactive=True, **_GATEWAY),
    SourceInfo("signal", "Signal", "sig", interactive=True, **_GATEWAY),
    SourceInfo("matrix", "Matrix", "mtrx", interactive=True, **_GATEWAY),
    SourceInfo("mattermost", "Mattermost", "mm", interactive=True, **_GATEWAY),
    SourceInfo("email", "Email (IMAP/SMTP)", "email", interactive=True, **_GATEWAY),
    SourceInfo("sms", "SMS via Twilio", "sms", interactive=True, **_GATEWAY),
    SourceInfo("dingtalk", "DingTalk", "ding", interactive=True, **_GATEWAY),
    SourceInfo("feishu", "Feishu/Lark", "feishu", interactive=True, **_GATEWAY),
    SourceInfo("wecom", "WeCom (WeChat Work)", "wecom", interactive=True, **_GATEWAY),
    SourceInfo("weixin", "Weixin (WeChat)", "weixin", interactive=True, **_GATEWAY),
    SourceInfo("bluebubbles", "iMessage via BlueBubbles", "imsg", interactive=True, **_GATEWAY),
    SourceInfo("qqbot", "QQ Bot", "qq", interactive=True, **_GATEWAY),
    SourceInfo("homeassistant", "Home Assistant", "hass", interactive=True, **_GATEWAY),
    SourceInfo("webhook", "Incoming webhooks", "hook", **_GATEWAY),
    SourceInfo("api-server", "API server requests", "api", reapable=True),
    SourceInfo("acp", "Editor integration (ACP)", "acp", interactive=True, reapable=True),
    SourceInfo("cron", "Scheduled cron jobs", "cron", reapable=True),
    SourceInfo("batch", "Batch processing runs", "batch", reapable=True),
)


@hookimpl
def hermes_register_sources(register: Callable[[SessionSource], None]) -> None:
    """Register the 22 built-in origins."""
    for source in BUILTIN_SOURCES:
        register(source)
