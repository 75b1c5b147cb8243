"""The ``email`` adapter: polls an IMAP mailbox for unseen mail and answers each message by
SMTP, as a reply in the same email thread (standard library ``imaplib``, ``smtplib``,
``email``).

Settings (``gateway.platforms.email`` in config.yaml):

- ``imap_host`` and ``smtp_host`` — required; ``imap_port`` (993 with ``imap_ssl``, else 143),
  ``imap_ssl`` (true), ``smtp_port`` (465 with ``smtp_ssl``, else 587), ``smtp_ssl`` (false),
  ``smtp_starttls`` (true).
- ``username`` — required; ``password`` (or ``password_env``) — required; the same login for
  IMAP and SMTP. ``address`` — the From address of the answers (default: ``username``).
- ``mailbox`` (``INBOX``), ``poll_seconds`` (30).
- ``allowed_senders`` — a list of addresses; when set, mail from anyone else is marked read and
  ignored (one log line each).

Every sender is one conversation (SPEC G1: ``agent:main:email:dm:<address>``); email has no
threads of its own the gateway routes by, so replies just keep the subject and the
``In-Reply-To``/``References`` chain. A message is marked ``\\Seen`` only once it is stored (at
the next poll, or at stop): one left unseen (the gateway stopped, or crashed, or the store
refused it) is read again — catch-up after a restart needs nothing more, and the gateway
recognises a mail it already stored. Polling never waits for a mail to be stored, so one busy
conversation does not hold up the others. Auto-replies
(``Auto-Submitted``), mailing-list bulk mail and mail from the bot's own address are marked
read and ignored, so two robots never answer each other forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import imaplib
import logging
import re
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid, parseaddr, parsedate_to_datetime
from typing import Any

from hermes_hookspecs import (
    Attachment,
    Deliver,
    Delivery,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    RecentIds,
    SettingsReader,
    answer_text,
    one_line,
    unless_too_old,
)

log = logging.getLogger("hermes.gateway.email")

DEFAULTS: Mapping[str, Any] = {
    "imap_ssl": True,
    "smtp_ssl": False,
    "smtp_starttls": True,
    "mailbox": "INBOX",
    "poll_seconds": 30,
    "timeout_seconds": 30,
}
QUOTE_HEADER = re.compile(r"^On .+ wrote:\s*$")


@dataclass(frozen=True)
class IncomingMail:
    """One message read from the mailbox, with what an answer needs."""

    uid: str
    event: PlatformEvent | None
    subject: str
    message_id: str | None
    references: str | None


def readable_text(body: str) -> str:
    """The new part of a plain-text mail: quoted lines (``>``), the ``On … wrote:`` line
    above them and a ``-- `` signature removed."""
    kept: list[str] = []
    for line in body.replace("\r\n", "\n").split("\n"):
        if line == "-- ":
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line)
    while kept and (not kept[-1].strip() or QUOTE_HEADER.match(kept[-1])):
        kept.pop()
    return "\n".join(kept).strip()


def parse_mail(uid: str, data: bytes, own_address: str) -> IncomingMail:
    """What one raw message (RFC 5322 bytes) means for the gateway."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    sender = parseaddr(str(message.get("From", "")))[1].lower()
    subject = str(message.get("Subject", "") or "")
    message_id = message.get("Message-ID")
    references = " ".join(part for part in (message.get("References"), message_id) if part) or None
    robot = (
        str(message.get("Auto-Submitted", "no")).lower() != "no"
        or str(message.get("Precedence", "")).lower() in {"bulk", "list", "junk"}
        or not sender
        or sender == own_address.lower()
    )
    event: PlatformEvent | None = None
    if not robot:
        part = message.get_body(preferencelist=("plain",))
        body = part.get_content() if isinstance(part, EmailMessage) else ""
        attachments = tuple(
            Attachment(f"file {item.get_filename() or 'unnamed'}", None, item.get_content_type())
            for item in message.iter_attachments()
        )
        text = readable_text(str(body))
        if text or attachments:
            event = PlatformEvent(
                platform="email",
                chat_id=sender,
                text=text,
                chat_type="dm",
                user_id=sender,
                message_id=str(message_id) if message_id else None,
                attachments=attachments,
                user_name=parseaddr(str(message.get("From", "")))[0] or None,
                chat_name=subject or None,
                sent_at=_sent_at(message),
            )
    return IncomingMail(uid, event, subject, str(message_id) if message_id else None, references)


def _sent_at(message: EmailMessage) -> float | None:
    """The mail's ``Date`` as seconds since the epoch, when it has a readable one."""
    try:
        return parsedate_to_datetime(str(message["Date"])).timestamp() if message["Date"] else None
    except (TypeError, ValueError):
        return None


def reply_subject(subject: str) -> str:
    """``Re: <subject>`` (never ``Re: Re: …``)."""
    subject = subject.strip() or "Your message"
    return subject if subject.lower().startswith("re:") else f"Re: {subject}"


class EmailAdapter:
    """An email account the agent answers from (IMAP polling, SMTP replies)."""

    name = "email"
    label = "Email (IMAP/SMTP)"
    short_label = "email"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._password = ""
        self._allowed: frozenset[str] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._replies = AnswerTasks()
        self._recent = RecentIds()
        self._to_mark: set[str] = set()
        self._max_age: float | None = None
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the mailbox is opened in :meth:`start`)."""
        read = SettingsReader("email", config, DEFAULTS)
        for name in ("imap_host", "smtp_host", "username"):
            read.text(name, required=True)
        self._password = read.secret("password", "")
        settings = read.values
        settings.setdefault("imap_port", 993 if settings["imap_ssl"] else 143)
        settings.setdefault("smtp_port", 465 if settings["smtp_ssl"] else 587)
        settings.setdefault("address", settings["username"])
        for name in ("imap_port", "smtp_port", "poll_seconds", "timeout_seconds"):
            read.number(name, positive=True)
        self._max_age = read.optional_seconds("catch_up_max_age")
        if settings.get("allowed_senders") is not None:
            self._allowed = read.names(
                "allowed_senders", what="addresses", lower=True, single=False
            )
        self._settings = settings

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Mail ``text`` to the address ``chat_id``; the new Message-ID."""
        return self._send_mail(chat_id, "Message from Hermes", text, None, None)

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a mail conversation: one per sender address."""
        return build_session_key("email", "dm", chat_id.lower())

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Email has no threads the gateway routes by: None (the sender's conversation)."""
        return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check both logins, then poll the mailbox."""
        self.connect(config)
        self._stopping = False
        self._wake = asyncio.Event()
        await asyncio.to_thread(self._check_logins)
        settings = self._settings
        self.address = (
            f"{settings['address']} (imap {settings['imap_host']}:{settings['imap_port']})"
        )
        self._poller = asyncio.create_task(self._poll(deliver))
        log.info("email: reading %s every %ss", self.address, settings["poll_seconds"])

    async def stop(self) -> None:
        """Finish the mail being delivered, send the answers going out, stop polling."""
        self._stopping = True
        self._wake.set()
        poller, self._poller = self._poller, None
        if poller is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        await self._replies.wait()
        if self._to_mark:  # what was stored since the last poll
            with contextlib.suppress(UserFacingError, OSError, imaplib.IMAP4.error):
                await asyncio.to_thread(self._mark_stored)

    # ------------------------------------------------------------------ IMAP

    def _imap(self) -> imaplib.IMAP4:
        settings = self._settings
        host, port = str(settings["imap_host"]), int(settings["imap_port"])
        timeout = float(settings["timeout_seconds"])
        try:
            client: imaplib.IMAP4 = (
                imaplib.IMAP4_SSL(host, port, ssl_context=ssl.create_default_context(),
                                  timeout=timeout)
                if settings["imap_ssl"]
                else imaplib.IMAP4(host, port, timeout=timeout)
            )  # fmt: skip
        except (OSError, imaplib.IMAP4.error) as error:
            raise UserFacingError(
                f"cannot reach the IMAP server {host}:{port}: {one_line(error)}"
            ) from None
        try:
            client.login(str(settings["username"]), self._password)
        except imaplib.IMAP4.error as error:
            with contextlib.suppress(Exception):
                client.logout()
            raise UserFacingError(
                f"the IMAP server {host} refused the login of {settings['username']}: "
                f"{one_line(error)}"
            ) from None
        status, _ = client.select(str(settings["mailbox"]))
        if status != "OK":
            client.logout()
            raise UserFacingError(f"the IMAP server has no mailbox {settings['mailbox']}")
        return client

    def _check_logins(self) -> None:
        self._imap().logout()
        with self._smtp():
            pass

    def _fetch_unseen(self) -> tuple[imaplib.IMAP4, list[IncomingMail]]:
        client = self._imap()
        self._mark_seen(client)
        status, found = client.uid("SEARCH", "UNSEEN")
        if status != "OK":
            client.logout()
            raise UserFacingError(f"the IMAP search failed: {found!r}")
        mails: list[IncomingMail] = []
        own = str(self._settings["address"])
        for uid in (found[0] or b"").split():
            if uid.decode() in self._recent:
                continue  # on its way to the store already
            status, parts = client.uid("FETCH", uid.decode(), "(BODY.PEEK[])")
            raw = next((p[1] for p in parts if isinstance(p, tuple)), None)
            if status == "OK" and isinstance(raw, bytes):
                mails.append(parse_mail(uid.decode(), raw, own))
        return client, mails

    def _mark_seen(self, client: imaplib.IMAP4) -> None:
        """Mark ``\\Seen`` every mail stored (or ignored) since the last time."""
        uids: Sequence[str] = sorted(self._to_mark)
        if uids:
            client.uid("STORE", ",".join(uids), "+FLAGS", "(\\Seen)")
            self._to_mark.difference_update(uids)

    def _mark_stored(self) -> None:
        client = self._imap()
        try:
            self._mark_seen(client)
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    async def _poll(self, deliver: Deliver) -> None:
        pause = float(self._settings["poll_seconds"])
        while not self._stopping:
            try:
                await self._poll_once(deliver)
            except UserFacingError as error:
                log.warning("email: %s; trying again in %.0fs", error, pause)
            except (OSError, imaplib.IMAP4.error) as error:
                log.warning("email: reading mail failed (%s); trying again in %.0fs",
                            one_line(error), pause)  # fmt: skip
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), pause)

    async def _poll_once(self, deliver: Deliver) -> None:
        client, mails = await asyncio.to_thread(self._fetch_unseen)
        with contextlib.suppress(Exception):
            await asyncio.to_thread(client.logout)
        for mail in mails:
            if not self._recent.begin(mail.uid):
                continue
            event = mail.event
            if (
                event is not None
                and self._allowed is not None
                and event.chat_id not in self._allowed
            ):
                log.warning("email: ignored mail from %s (not in allowed_senders)", event.chat_id)
                event = None
            if event is None:
                self._stored(mail.uid)
                continue
            # Not awaited here: a mail waiting behind its conversation's turn never holds up
            # the others; it is marked \\Seen once stored.
            self._replies.spawn(self._answer(mail, deliver(unless_too_old(event, self._max_age))))

    def _stored(self, uid: str) -> None:
        self._recent.taken(uid)
        self._to_mark.add(uid)

    # ------------------------------------------------------------------ SMTP

    def _smtp(self) -> smtplib.SMTP:
        settings = self._settings
        host, port = str(settings["smtp_host"]), int(settings["smtp_port"])
        timeout = float(settings["timeout_seconds"])
        context = ssl.create_default_context()
        server: smtplib.SMTP | None = None
        try:
            server = (
                smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
                if settings["smtp_ssl"]
                else smtplib.SMTP(host, port, timeout=timeout)
            )
            if not settings["smtp_ssl"] and settings["smtp_starttls"]:
                server.starttls(context=context)
            server.ehlo()
            if server.has_extn("auth"):
                server.login(str(settings["username"]), self._password)
        except smtplib.SMTPAuthenticationError as error:
            _close(server)
            said = error.smtp_error
            said_text = said.decode(errors="replace") if isinstance(said, bytes) else str(said)
            raise UserFacingError(
                f"the SMTP server {host} refused the login of {settings['username']}: "
                f"{error.smtp_code} {said_text}"
            ) from None
        except (OSError, smtplib.SMTPException) as error:
            _close(server)
            raise UserFacingError(
                f"cannot use the SMTP server {host}:{port}: {one_line(error)}"
            ) from None
        return server

    def _send_mail(
        self,
        to: str,
        subject: str,
        text: str,
        in_reply_to: str | None,
        references: str | None,
    ) -> str:
        message = EmailMessage()
        message["From"] = str(self._settings["address"])
        message["To"] = to
        message["Subject"] = subject
        message["Auto-Submitted"] = "auto-replied" if in_reply_to else "auto-generated"
        message_id = make_msgid(domain=str(self._settings["address"]).rpartition("@")[2] or None)
        message["Message-ID"] = message_id
        if in_reply_to:
            message["In-Reply-To"] = in_reply_to
        if references:
            message["References"] = references
        message.set_content(text)
        with self._smtp() as server:
            server.send_message(message)
        return message_id

    async def _answer(self, mail: IncomingMail, delivery: Delivery) -> None:
        event = mail.event
        assert event is not None
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            self._recent.dropped(mail.uid)
            log.warning("email: mail %s left unread (%s)", mail.uid, error)
            return
        self._stored(mail.uid)
        try:
            text = answer_text(await delivery.reply(), failure="The agent could not answer: ")
        except DeliveryRefused as error:
            log.error("email: no answer for %s: %s", event.chat_id, error)
            return
        if not text:
            return
        try:
            await asyncio.to_thread(self._send_mail, event.chat_id, reply_subject(mail.subject),
                                    text, mail.message_id, mail.references)  # fmt: skip
        except UserFacingError as error:
            log.error("email: answering %s failed: %s", event.chat_id, error)


def _close(server: smtplib.SMTP | None) -> None:
    if server is not None:
        with contextlib.suppress(Exception):
            server.close()
