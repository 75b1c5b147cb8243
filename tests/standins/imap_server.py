"""A STAND-IN IMAP4rev1 server, for tests only.

It is not Dovecot or any real mail server: it is written from RFC 3501 for the commands the
``hermes-platform-email`` adapter sends through the standard library's ``imaplib``, over plain
TCP on 127.0.0.1 (no TLS), with one user and one mailbox (``INBOX``) in memory:

``CAPABILITY``, ``LOGIN`` (``NO [AUTHENTICATIONFAILED]`` for wrong credentials), ``SELECT``,
``NOOP``, ``UID SEARCH UNSEEN`` / ``UID SEARCH ALL``, ``UID FETCH <uids> (BODY.PEEK[])`` (the
message without setting ``\\Seen``) and ``(RFC822)`` (which sets it), ``UID STORE <uids>
+FLAGS (\\Seen)``, ``LOGOUT``. Anything else is ``BAD``; a command before ``LOGIN`` that needs
it is ``NO``. ``<uids>`` is a number or a comma-separated list.

In a test::

    with IMAPStandIn(user="bot@example.test", password="pw") as imap:
        imap.deliver(message_bytes)          # lands unseen in INBOX; returns its UID
        ... point imaplib (or the adapter) at 127.0.0.1:imap.port ...
        imap.seen_uids()                     # what the client marked \\Seen
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass, field

from standins.threaded import ThreadedStandIn


@dataclass
class _Mail:
    uid: int
    data: bytes
    flags: set[str] = field(default_factory=set)


class IMAPStandIn(ThreadedStandIn):
    """The stand-in server (asyncio streams on their own thread)."""

    thread_name = "imap-standin"

    def __init__(self, user: str, password: str) -> None:
        super().__init__()
        self.user = user
        self.password = password
        self.commands: list[str] = []
        """Every command line received (passwords included: test data only)."""
        self._mails: list[_Mail] = []
        self._next_uid = 1
        self._lock = threading.Lock()
        self._server: asyncio.Server | None = None
        self.port = 0

    # ------------------------------------------------------------------ test side

    def deliver(self, data: bytes) -> int:
        """A message arriving in INBOX, unseen; its UID."""
        with self._lock:
            uid = self._next_uid
            self._next_uid += 1
            self._mails.append(_Mail(uid, data))
            return uid

    def seen_uids(self) -> list[int]:
        with self._lock:
            return [m.uid for m in self._mails if "\\Seen" in m.flags]

    # ------------------------------------------------------------------ protocol

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def send(line: str | bytes) -> None:
            writer.write(line if isinstance(line, bytes) else line.encode() + b"\r\n")

        send("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] stand-in IMAP ready")
        authenticated = selected = False
        try:
            while True:
                raw = await reader.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.commands.append(line)
                tag, _, rest = line.partition(" ")
                command, _, arguments = rest.partition(" ")
                command = command.upper()
                if command == "UID":
                    sub, _, arguments = arguments.partition(" ")
                    command = "UID " + sub.upper()
                if command == "CAPABILITY":
                    send("* CAPABILITY IMAP4rev1 AUTH=PLAIN")
                    send(f"{tag} OK CAPABILITY completed")
                elif command == "NOOP":
                    send(f"{tag} OK NOOP completed")
                elif command == "LOGOUT":
                    send("* BYE stand-in IMAP logging out")
                    send(f"{tag} OK LOGOUT completed")
                    await writer.drain()
                    break
                elif command == "LOGIN":
                    user, password = _strings(arguments)
                    if (user, password) == (self.user, self.password):
                        authenticated = True
                        send(f"{tag} OK [CAPABILITY IMAP4rev1] LOGIN completed")
                    else:
                        send(f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials")
                elif not authenticated and command in {"SELECT", "UID SEARCH", "UID FETCH",
                                                       "UID STORE"}:  # fmt: skip
                    send(f"{tag} NO not authenticated")
                elif command == "SELECT":
                    (mailbox,) = _strings(arguments)
                    if mailbox.upper() != "INBOX":
                        send(f"{tag} NO [NONEXISTENT] no such mailbox")
                        continue
                    selected = True
                    with self._lock:
                        count, uid_next = len(self._mails), self._next_uid
                    send("* FLAGS (\\Seen \\Answered \\Flagged \\Deleted \\Draft)")
                    send(f"* {count} EXISTS")
                    send("* 0 RECENT")
                    send("* OK [UIDVALIDITY 1] UIDs valid")
                    send(f"* OK [UIDNEXT {uid_next}] predicted next UID")
                    send(f"{tag} OK [READ-WRITE] SELECT completed")
                elif not selected and command.startswith("UID "):
                    send(f"{tag} BAD no mailbox selected")
                elif command == "UID SEARCH":
                    criterion = arguments.strip().upper()
                    if criterion not in {"UNSEEN", "ALL"}:
                        send(f"{tag} BAD the stand-in searches UNSEEN or ALL only")
                        continue
                    with self._lock:
                        uids = [m.uid for m in self._mails
                                if criterion == "ALL" or "\\Seen" not in m.flags]  # fmt: skip
                    send("* SEARCH" + "".join(f" {uid}" for uid in uids))
                    send(f"{tag} OK SEARCH completed")
                elif command == "UID FETCH":
                    uid_set, _, items = arguments.partition(" ")
                    items = items.strip().upper()
                    if items not in {"(BODY.PEEK[])", "(RFC822)"}:
                        send(f"{tag} BAD the stand-in fetches BODY.PEEK[] or RFC822 only")
                        continue
                    name = "BODY[]" if "PEEK" in items else "RFC822"
                    for number, mail in self._matching(uid_set):
                        if name == "RFC822":
                            mail.flags.add("\\Seen")
                        send(f"* {number} FETCH (UID {mail.uid} {name} {{{len(mail.data)}}}".encode()
                             + b"\r\n" + mail.data + b")\r\n")  # fmt: skip
                    send(f"{tag} OK FETCH completed")
                elif command == "UID STORE":
                    match = re.fullmatch(r"(\S+) \+FLAGS(?:\.SILENT)? \(([^)]*)\)", arguments)
                    if match is None:
                        send(f"{tag} BAD the stand-in stores +FLAGS only")
                        continue
                    flags = set(match[2].split())
                    for number, mail in self._matching(match[1]):
                        mail.flags |= flags
                        if ".SILENT" not in arguments.upper():
                            listed = " ".join(sorted(mail.flags))
                            send(f"* {number} FETCH (UID {mail.uid} FLAGS ({listed}))")
                    send(f"{tag} OK STORE completed")
                else:
                    send(f"{tag} BAD unknown command")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def _matching(self, uid_set: str) -> list[tuple[int, _Mail]]:
        wanted = {int(part) for part in uid_set.split(",") if part.isdigit()}
        with self._lock:
            return [(n, m) for n, m in enumerate(self._mails, 1) if m.uid in wanted]

    # ------------------------------------------------------------------ serving

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._session, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()


def _strings(arguments: str) -> list[str]:
    """IMAP astrings: atoms or double-quoted strings (with ``\\`` escapes)."""
    found = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', arguments)
    return [re.sub(r"\\(.)", r"\1", quoted) if quoted or not atom else atom
            for quoted, atom in found]  # fmt: skip
