"""A REAL local SMTP server for tests: aiosmtpd's ``Controller`` on 127.0.0.1 with AUTH
(PLAIN/LOGIN, checked against one login) that keeps every message it accepts."""

from __future__ import annotations

import email
import email.policy
import socket
import threading
import time
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SMTPSink:
    """aiosmtpd on a free port; :attr:`messages` holds what it accepted, parsed."""

    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user, password
        self.messages: list[EmailMessage] = []
        self.logins: list[str] = []
        self._condition = threading.Condition()
        self.port = free_port()
        self._controller = Controller(
            self, hostname="127.0.0.1", port=self.port, authenticator=self._authenticate,
            auth_require_tls=False,
        )  # fmt: skip

    def _authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
    ) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and (
            auth_data.login.decode(),
            auth_data.password.decode(),
        ) == (self.user, self.password)
        if ok:
            self.logins.append(mechanism)
        return AuthResult(success=ok, handled=False, auth_data=auth_data)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if not session.authenticated:
            return "530 5.7.0 Authentication required"
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        with self._condition:
            self.messages.append(parsed)
            self._condition.notify_all()
        return "250 OK"

    def wait_for(self, count: int, timeout: float = 60.0) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.messages)} mails sent, not {count}")
                self._condition.wait(left)
            return list(self.messages)

    def __enter__(self) -> SMTPSink:
        self._controller.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._controller.stop()
