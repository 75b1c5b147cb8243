"""The email adapter's pieces: reading mail (quotes, signatures, robots), settings checks, and
sending through smtplib to a real aiosmtpd server on 127.0.0.1."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

import pytest
from hermes_hookspecs import UserFacingError
from hermes_platform_email.adapter import EmailAdapter, parse_mail, readable_text, reply_subject
from standins.smtp_sink import SMTPSink

BOT = "hermes@bot.test"


def mail(sender: str = "Alice <alice@example.test>", body: str = "hello", **headers: str) -> bytes:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, BOT, "Plans"
    message["Message-ID"] = "<m1@example.test>"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(body)
    return bytes(message)


def test_the_new_part_of_a_reply_is_what_the_agent_reads() -> None:
    body = "Sounds good.\n\nOn Mon, 1 Dec 2026, Hermes wrote:\n> earlier answer\n> more\n-- \nAlice"
    assert readable_text(body) == "Sounds good."
    incoming = parse_mail("7", mail(body=body, References="<m0@example.test>"), BOT)
    assert incoming.event is not None
    assert (incoming.event.chat_id, incoming.event.user_id) == ("alice@example.test",) * 2
    assert incoming.event.text == "Sounds good." and incoming.event.user_name == "Alice"
    assert incoming.references == "<m0@example.test> <m1@example.test>"
    assert reply_subject("Plans") == "Re: Plans" and reply_subject("RE: x") == "RE: x"


def test_robots_and_the_bot_itself_are_not_answered() -> None:
    assert parse_mail("1", mail(Auto_Submitted="auto-replied"), BOT).event is None
    assert parse_mail("2", mail(Precedence="bulk"), BOT).event is None
    assert parse_mail("3", mail(sender=f"Hermes <{BOT}>"), BOT).event is None
    assert parse_mail("4", mail(body="> only a quote"), BOT).event is None


def test_missing_settings_are_one_line_naming_the_key() -> None:
    full = {"imap_host": "h", "smtp_host": "h", "username": "u", "password": "p"}
    for name in ("imap_host", "smtp_host", "username", "password"):
        partial = {k: v for k, v in full.items() if k != name}
        with pytest.raises(
            UserFacingError, match=rf"^gateway\.platforms\.email\.{name} is not set"
        ):
            EmailAdapter().connect(partial)
    with pytest.raises(UserFacingError, match="allowed_senders"):
        EmailAdapter().connect({**full, "allowed_senders": "alice"})


def test_send_mails_through_a_real_smtp_server_with_auth() -> None:
    with SMTPSink(BOT, "pw") as smtp:
        adapter = EmailAdapter()
        settings: dict[str, Any] = {"imap_host": "127.0.0.1", "smtp_host": "127.0.0.1",
                                    "smtp_port": smtp.port, "smtp_starttls": False,
                                    "username": BOT, "password": "pw"}  # fmt: skip
        adapter.connect(settings)
        message_id = adapter.send("bob@example.test", "A note for you")
        (sent,) = smtp.wait_for(1)
        assert sent["To"] == "bob@example.test" and sent["Message-ID"] == message_id
        assert sent.get_content().strip() == "A note for you" and smtp.logins
        adapter.connect({**settings, "password": "wrong"})
        with pytest.raises(UserFacingError, match="refused the login"):
            adapter.send("bob@example.test", "never")
    assert adapter.create_thread("bob@example.test", "x") is None
