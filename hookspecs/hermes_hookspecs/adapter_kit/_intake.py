"""Taking a platform's webhook callback in, the way every webhook adapter does it: read a
bounded body, let the adapter verify and parse it, deliver each new message once, acknowledge
the callback only once the message is stored, and answer in the background.

Duck-typed on aiohttp's ``web.Request``; the responses are aiohttp's, imported when the first
request comes (the adapter declares ``aiohttp`` itself, as for :func:`start_http_server`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._gateway import Deliver, Delivery, DeliveryRefused, PlatformEvent
from .._http_intake import BodyRefused, read_body
from ._delivery import AnswerTasks, answer_text
from ._loop import HttpServer, start_http_server
from ._taking import RecentIds
from ._text import one_line

if TYPE_CHECKING:
    from aiohttp import web

MAX_CALLBACK_BYTES = 1 << 20
"""The largest callback body a webhook adapter reads by default (1 MiB)."""


class WebhookRefused(Exception):
    """A callback the adapter does not take (raised by its ``parse``): the HTTP ``status`` to
    answer and one line saying why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Incoming:
    """One message a callback brought, as the adapter's ``parse`` returns it.

    - ``event`` — what to deliver to the gateway;
    - ``message_id`` — the platform's id for it: a re-send carries the same, and is
      acknowledged without being delivered twice;
    - ``send_answer`` — posts the answer's text to the platform (called once the turn is
      answered; with ``""`` when there is nothing to post, so it may do nothing);
    - ``on_stored`` — optional, called once the message is stored, before its turn;
    - ``acknowledgement`` — optional, the 200 answer to the first copy of the message once
      stored (a platform that takes a passive reply in it); the intake's plain
      acknowledgement otherwise.
    """

    event: PlatformEvent
    message_id: str
    send_answer: Callable[[str], Awaitable[None]]
    on_stored: Callable[[], None] | None = None
    acknowledgement: Callable[[], Awaitable[web.StreamResponse]] | None = None


Handler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]
"""An aiohttp request handler."""

Parse = Callable[["web.Request", bytes], "Incoming | web.StreamResponse | None"]
"""An adapter's check and reading of one callback: the request (headers, query) and its body
to an :class:`Incoming`, None for a callback with nothing for the agent (acknowledged), or a
response of its own (a URL check's challenge); :class:`WebhookRefused` to refuse it."""


class WebhookIntake:
    """The receiving half of a webhook adapter; the adapter routes its callback URL to
    :meth:`receive` with its own ``parse``.

    - ``platform`` names it in the log lines (``<platform> refused a request from …``);
    - ``ack_wait`` — how long a callback waits for its message to be stored (counted from its
      arrival) before it is answered 503, so the platform sends it again;
    - ``hold_refusals`` — for a platform that re-sends only what got no answer in time: a
      503 is not answered before this many seconds after the arrival;
    - ``again`` — appended to the reason of a 503 (``Feishu sends it again``);
    - ``acknowledgement`` — the plain 200 answer: a dict is sent as JSON (refusals as
      ``{"error": reason}``), a string as text (refusals as their reason).

    The adapter's ``start`` calls :meth:`serve` (or serves :meth:`receive` itself and sets
    :attr:`deliver`); its ``stop`` awaits :meth:`stop` (or ``answers.wait()`` once its server
    is stopped).
    """

    def __init__(
        self,
        platform: str,
        log: logging.Logger,
        *,
        ack_wait: float = 2.5,
        max_body_bytes: int = MAX_CALLBACK_BYTES,
        hold_refusals: float | None = None,
        again: str = "",
        acknowledgement: str | Mapping[str, Any] | None = None,
    ) -> None:
        self.platform = platform
        self.log = log
        self.ack_wait = ack_wait
        self.max_body_bytes = max_body_bytes
        self.hold_refusals = hold_refusals
        self.again = again
        self.acknowledgement: str | Mapping[str, Any] = (
            {} if acknowledgement is None else acknowledgement
        )
        self.deliver: Deliver = self._not_started
        self.answers = AnswerTasks()
        """The answers going out (await ``answers.wait()`` at stop)."""
        self._seen = RecentIds(4096)
        self._on_the_way: dict[str, Delivery] = {}
        self._server: HttpServer | None = None

    async def serve(
        self,
        deliver: Deliver,
        settings: Mapping[str, Any],
        receive: Handler,
        url_check: Handler | None = None,
    ) -> str:
        """Deliver to ``deliver`` and serve the callback URL where the adapter's checked
        ``settings`` say (``host``, ``port`` — 0: a free one — and ``path``): POSTs to
        ``receive`` (the adapter's handler calling :meth:`receive`), GETs to ``url_check``
        when the platform checks the URL that way. The URL it listens at; one line
        (:class:`UserFacingError`) when the address cannot be used."""
        from aiohttp import web

        self.deliver = deliver
        path = str(settings["path"])
        app = web.Application()
        if url_check is not None:
            app.router.add_get(path, url_check)
        app.router.add_post(path, receive)
        host, port = str(settings["host"]), int(settings["port"])
        self._server = await start_http_server(app, host, port)
        return f"http://{self._server.host}:{self._server.port}{path}"

    async def stop(self) -> None:
        """Stop serving (open connections closed), then wait for the answers going out."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self.answers.wait()

    async def receive(self, request: web.Request, parse: Parse) -> web.StreamResponse:
        """Answer one callback: refused (one log line), acknowledged at once when it has
        nothing to deliver or was stored before, else once its message is stored."""
        arrived = asyncio.get_running_loop().time()
        try:
            body = await read_body(request, self.max_body_bytes)
            taken = parse(request, body)
        except (BodyRefused, WebhookRefused) as refused:
            return self.refuse(request, refused.status, refused.reason)
        if taken is None:
            return self.acknowledged()
        if not isinstance(taken, Incoming):
            return taken
        delivery = self._on_the_way.get(taken.message_id)
        first = delivery is None and self._seen.begin(taken.message_id)
        if first:
            delivery = self._on_the_way[taken.message_id] = self.deliver(taken.event)
            self.answers.spawn(self._follow(taken, delivery))
        if delivery is None:
            return self.acknowledged()  # a re-send of a message stored before
        try:
            await asyncio.wait_for(delivery.stored(), self._left(arrived + self.ack_wait))
        except TimeoutError:
            reason = f"not stored within {self.ack_wait:g}s"
        except DeliveryRefused as error:
            reason = str(error)
        else:
            if first and taken.acknowledgement is not None:
                return await taken.acknowledgement()
            return self.acknowledged()
        if self.hold_refusals is not None:
            await asyncio.sleep(self._left(arrived + self.hold_refusals))
        return self.refuse(request, 503, f"{reason}; {self.again}" if self.again else reason)

    def acknowledged(self) -> web.StreamResponse:
        """The plain 200 answer."""
        from aiohttp import web

        if isinstance(self.acknowledgement, str):
            return web.Response(text=self.acknowledgement)
        return web.json_response(dict(self.acknowledgement))

    def refuse(self, request: web.Request, status: int, reason: str) -> web.StreamResponse:
        """Answer ``status`` with ``reason``, logged as one line naming the sender."""
        from aiohttp import web

        self.log.warning(
            "%s refused a request from %s (HTTP %d): %s",
            self.platform,
            request.remote or "?",
            status,
            one_line(reason),
        )
        if isinstance(self.acknowledgement, str):
            return web.Response(text=reason, status=status)
        return web.json_response({"error": reason}, status=status)

    async def _follow(self, taken: Incoming, delivery: Delivery) -> None:
        """Once stored: remember the message as taken, wait for its answer and post it."""
        event = taken.event
        try:
            await delivery.stored()
        except DeliveryRefused:
            self._seen.dropped(taken.message_id)
            return  # answered 503: the platform sends it again
        finally:
            self._on_the_way.pop(taken.message_id, None)
        self._seen.taken(taken.message_id)
        if taken.on_stored is not None:
            taken.on_stored()
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            self.log.error("%s: no answer for %s: %s", self.platform, event.chat_id, error)
            text = ""
        try:
            await taken.send_answer(text)
        except Exception as error:
            self.log.error(
                "%s: answering %s failed: %s", self.platform, event.chat_id, one_line(error)
            )

    @staticmethod
    def _left(until: float) -> float:
        return max(0.0, until - asyncio.get_running_loop().time())

    def _not_started(self, event: PlatformEvent) -> Delivery:
        raise DeliveryRefused(f"the {self.platform} platform is not started", stopping=True)
