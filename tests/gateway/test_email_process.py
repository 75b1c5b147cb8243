"""End to end: the installed ``hermes gateway run`` with the email plugin reading the IMAP
stand-in and answering through a REAL aiosmtpd SMTP server on 127.0.0.1, with the stand-in
model: one continuous conversation per sender, two senders kept apart, replies threaded by
In-Reply-To/References, the chat commands by mail, robots ignored; and the plugin installed
alone beside the core (SPEC O2, G1)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import TITLE_MATCH, title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from standins.imap_server import IMAPStandIn
from standins.openai_server import OpenAIStandIn, Reply
from standins.smtp_sink import SMTPSink

from hermes_core.store import SessionStore
from hermes_core.store.routed_sessions import RoutingStore

pytestmark = pytest.mark.slow

BOT, PASSWORD = "hermes@bot.test", "mail-password"


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def mailboxes() -> Iterator[tuple[IMAPStandIn, SMTPSink]]:
    with IMAPStandIn(BOT, PASSWORD) as imap, SMTPSink(BOT, PASSWORD) as smtp:
        yield imap, smtp


def platform(imap: IMAPStandIn, smtp: SMTPSink, **extra: Any) -> dict[str, Any]:
    return {"email": {"imap_host": "127.0.0.1", "imap_port": imap.port, "imap_ssl": False,
                      "smtp_host": "127.0.0.1", "smtp_port": smtp.port, "smtp_starttls": False,
                      "username": BOT, "password": PASSWORD, "poll_seconds": 0.3, **extra}}  # fmt: skip


class Correspondent:
    """Someone writing to the bot, replying in the thread of its last answer."""

    def __init__(self, imap: IMAPStandIn, smtp: SMTPSink, address: str) -> None:
        self.imap, self.smtp, self.address = imap, smtp, address
        self.count = 0
        self.last: EmailMessage | None = None

    def write(self, body: str, **headers: str) -> EmailMessage:
        """Send ``body`` (a reply to the bot's last answer, when there is one); its answer."""
        self.count += 1
        message = EmailMessage()
        message["From"], message["To"] = self.address, BOT
        message["Message-ID"] = f"<{self.count}.{self.address}>"
        if self.last is not None:
            message["Subject"] = str(self.last["Subject"])
            message["In-Reply-To"] = str(self.last["Message-ID"])
            message["References"] = f"{self.last['References']} {self.last['Message-ID']}"
            body += "\n\nOn Thu, Hermes wrote:\n" + "".join(
                f"> {line}\n" for line in self.last.get_content().splitlines()
            )
        else:
            message["Subject"] = "Plans"
        for name, value in headers.items():
            message[name.replace("_", "-")] = value
        message.set_content(body)
        already = len(self.smtp.messages)
        self.imap.deliver(bytes(message))
        answer = next(m for m in self.smtp.wait_for(already + 1)[already:])
        assert answer["To"] == self.address
        assert answer["In-Reply-To"] == message["Message-ID"]
        self.last = answer
        return answer


def test_each_sender_is_one_continuous_conversation_with_the_commands(
    tmp_path: Path, standin: OpenAIStandIn, mailboxes: tuple[IMAPStandIn, SMTPSink]
) -> None:
    imap, smtp = mailboxes
    standin.add(Reply(text="Hello Alice!"), Reply(text="Hello Bob!"),
                Reply(text="Still here, Alice."), Reply(text="Fresh."))  # fmt: skip
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(imap, smtp))
    alice = Correspondent(imap, smtp, "alice@example.test")
    bob = Correspondent(imap, smtp, "bob@example.test")
    with GatewayProcess(home) as gateway:
        first = alice.write("alice: my secret is 42")
        assert first.get_content().strip() == "Hello Alice!" and first["Subject"] == "Re: Plans"
        assert bob.write("bob: my secret is 7").get_content().strip() == "Hello Bob!"
        again = alice.write("are you there?")
        assert again.get_content().strip() == "Still here, Alice."
        assert again["Subject"] == "Re: Plans"  # never "Re: Re: Plans"
        assert "<1.alice@example.test>" in str(again["References"])
        assert alice.write("/title Trip planning").get_content().strip() == (
            "✓ Title set: Trip planning"
        )
        assert alice.write("/title").get_content().strip() == "Title: Trip planning"
        assert alice.write("/sethome").get_content().strip() == (
            "✓ This chat is now the home channel of email."
        )
        # An out-of-office robot is marked read and never answered.
        robot = EmailMessage()
        robot["From"], robot["To"], robot["Subject"] = "bob@example.test", BOT, "Away"
        robot["Auto-Submitted"] = "auto-replied"
        robot.set_content("I am away")
        robot_uid = imap.deliver(bytes(robot))
        assert alice.write("/new").get_content().strip().startswith("✓")
        assert alice.write("new topic").get_content().strip() == "Fresh."
        assert robot_uid in imap.seen_uids()
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    assert set(imap.seen_uids()) == set(range(1, robot_uid + 3))  # everything read
    with SessionStore.open(home) as store:
        keyed: dict[str, list[Any]] = {}
        for session in store.select_sessions():
            keyed.setdefault(str(session.session_key), []).append(session)
        assert set(keyed) == {"agent:main:email:dm:alice@example.test",
                              "agent:main:email:dm:bob@example.test"}  # fmt: skip
        (bob_session,) = keyed["agent:main:email:dm:bob@example.test"]
        assert user_texts(store.messages(bob_session.id)) == ["bob: my secret is 7"]
        old, new = sorted(keyed["agent:main:email:dm:alice@example.test"],
                          key=lambda s: s.started_at)  # fmt: skip
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        # The quoted answers below each reply are not part of what was stored.
        assert user_texts(store.messages(old.id))[:2] == [
            "alice: my secret is 42",
            "are you there?",
        ]
        assert user_texts(store.messages(new.id)) == ["new topic"]
        assert RoutingStore(store).home("email") == ("alice@example.test", None)
    bob_turn = next(body for body in standin.requests
                    if "bob: my secret" in str(body["messages"][-1].get("content")))  # fmt: skip
    assert "secret is 42" not in str(bob_turn["messages"])


def test_a_refused_login_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, mailboxes: tuple[IMAPStandIn, SMTPSink]
) -> None:
    imap, smtp = mailboxes
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(imap, smtp, password="wrong"))
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "email" in line]
    assert len(lines) == 1 and f"refused the login of {BOT}" in lines[0]
    assert PASSWORD not in gateway.log_text()


def test_the_email_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-platform-email")
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {"hermes-platform-email"}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and "platform:email" in listed.stdout


def test_one_busy_conversation_does_not_hold_up_the_others(
    tmp_path: Path, standin: OpenAIStandIn, mailboxes: tuple[IMAPStandIn, SMTPSink]
) -> None:
    imap, smtp = mailboxes
    release = threading.Event()
    standin.add(
        Reply(text="Slow answer.", match="slow question", hold=release, hold_after_chunks=1),
        Reply(text="Second answer.", match="second question"),
        Reply(text="Answer for Bob.", match="bob's question"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(imap, smtp))

    uids: list[int] = []

    def mail(sender: str, body: str, number: int) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, BOT, "Plans"
        message["Message-ID"] = f"<{number}.{sender}>"
        message.set_content(body)
        uids.append(imap.deliver(bytes(message)))

    with GatewayProcess(home) as gateway:
        mail("alice@example.com", "slow question", 1)
        deadline = time.monotonic() + 30
        while not any("slow question" in str(b["messages"]) for b in standin.requests):
            assert time.monotonic() < deadline, "the model was never asked"
            time.sleep(0.05)
        mail("alice@example.com", "second question", 2)  # waits behind Alice's first answer
        time.sleep(1)  # a few polls
        mail("bob@example.com", "bob's question", 3)
        (first,) = smtp.wait_for(1)
        assert first["To"] == "bob@example.com" and "Answer for Bob." in first.get_content()
        release.set()
        answers = smtp.wait_for(3)
        assert [m["To"] for m in answers][1:] == ["alice@example.com", "alice@example.com"]
        assert gateway.terminate() == 0
    assert sorted(imap.seen_uids()) == sorted(uids)


def test_a_mail_marked_seen_before_a_kill_9_is_answered_once_after_the_restart(
    tmp_path: Path, standin: OpenAIStandIn, mailboxes: tuple[IMAPStandIn, SMTPSink]
) -> None:
    """``\\Seen`` is set once the mail is in the gateway inbox; the IMAP server will not give
    it again, so the next start answers it from the inbox (a new mail to the sender)."""
    imap, smtp = mailboxes
    release = threading.Event()
    standin.add(
        Reply(text="never finished", match="first question", hold=release, hold_after_chunks=0),
        Reply(text="Answer to the second.", match="second question", times=None),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(imap, smtp))

    def mail(body: str, number: int) -> int:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "alice@example.com", BOT, "Plans"
        message["Message-ID"] = f"<{number}.alice@example.com>"
        message.set_content(body)
        return imap.deliver(bytes(message))

    def wait(condition: Any, what: str) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    try:
        with GatewayProcess(home) as gateway:
            first = mail("first question", 1)
            wait(lambda: any("first question" in str(b["messages"]) for b in standin.requests),
                 "the first turn reached the model")  # fmt: skip
            second = mail("second question", 2)  # waits behind the first answer
            wait(lambda: set(imap.seen_uids()) == {first, second}, "both marked \\Seen")
            gateway.kill()
    finally:
        release.set()
    assert smtp.messages == []
    with GatewayProcess(home) as gateway:
        (answer,) = smtp.wait_for(1)
        assert answer["To"] == "alice@example.com"
        assert "Answer to the second." in answer.get_content()
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # nothing left to answer again
        time.sleep(2)
        assert gateway.terminate() == 0
    assert len(smtp.messages) == 1 and "Traceback" not in gateway.log_text()
    asked = [
        b
        for b in standin.requests
        if "second question" in str(b["messages"][-1:]) and TITLE_MATCH not in str(b)
    ]
    assert len(asked) == 1
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == ["first question", "second question"]
        assert store.routing.inbox_pending() == []
