"""The gateway's :class:`~hermes_hookspecs.Delivery`: the bridge between an adapter waiting on
the event loop and the worker thread that answers the event.

The worker thread reports through :class:`DeliveryBridge` (thread-safe: its reports hop onto
the loop with ``call_soon_threadsafe``, in order, several at a time when they come together); the adapter awaits :class:`EventDelivery`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from hermes_hookspecs import DeliveryRefused, GatewayReply

_END = object()


class EventDelivery:
    """One delivered event, seen from the adapter's side (lives on the event loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._stored: asyncio.Future[str | None] = loop.create_future()
        self._reply: asyncio.Future[GatewayReply] = loop.create_future()
        self._deltas: asyncio.Queue[object] = asyncio.Queue()
        # A refusal nobody awaited (the adapter gave up first) is not an error to log.
        self._stored.add_done_callback(_consume_exception)
        self._reply.add_done_callback(_consume_exception)

    async def stored(self) -> str | None:
        """The session id once the event is stored; DeliveryRefused if it never will be."""
        return await asyncio.shield(self._stored)

    async def text_deltas(self) -> AsyncIterator[str]:
        """The answer's text as it streams, ending when the answer is complete."""
        while True:
            piece = await self._deltas.get()
            if piece is _END:
                return
            assert isinstance(piece, str)
            yield piece

    async def reply(self) -> GatewayReply:
        """The whole answer."""
        return await asyncio.shield(self._reply)

    # ------------------------------------------------------------------ loop side

    def _set_stored(self, session_id: str | None) -> None:
        if not self._stored.done():
            self._stored.set_result(session_id)

    def _push(self, delta: str) -> None:
        self._deltas.put_nowait(delta)

    def _finish(self, reply: GatewayReply) -> None:
        self._set_stored(reply.session_id)
        if not self._reply.done():
            self._reply.set_result(reply)
        self._deltas.put_nowait(_END)

    def _refuse(self, reason: str, stopping: bool = False, store_down: bool = False) -> None:
        if not self._stored.done():
            self._stored.set_exception(
                DeliveryRefused(reason, stopping=stopping, store_down=store_down)
            )
        if not self._reply.done():
            self._reply.set_exception(
                DeliveryRefused(reason, stopping=stopping, store_down=store_down)
            )
        self._deltas.put_nowait(_END)

    def refuse(self, reason: str) -> None:
        """Refuse the event from the loop thread (the gateway is stopping)."""
        self._refuse(reason, stopping=True)

    def not_stored(self, reason: str, *, store_down: bool = False) -> None:
        """Refuse the event from the loop thread: it could not be recorded (the platform may
        send it again). ``store_down``: the store takes no writes at all (a full disk)."""
        self._refuse(reason, store_down=store_down)

    def stored_as(self, session_id: str | None) -> None:
        """The event is recorded (in the inbox), its turn still to come: the adapter may
        acknowledge it now. ``session_id``: the chat's session then, if it has one."""
        self._set_stored(session_id)

    @property
    def is_stored(self) -> bool:
        """Whether :meth:`stored` has its answer."""
        done = self._stored.done() and not self._stored.cancelled()
        return done and self._stored.exception() is None

    def finish(self, reply: GatewayReply) -> None:
        """Answer the event from the loop thread (``/stop``)."""
        self._finish(reply)


class DeliveryBridge:
    """What the worker thread answering an event reports to its :class:`EventDelivery`.

    The reports reach the loop in order, in batches: a report made while the previous batch
    still waits for the loop joins it, so an answer that comes at once (the user turn stored,
    its text, the end) wakes the loop once or twice rather than once per report."""

    def __init__(self, delivery: EventDelivery) -> None:
        self._delivery = delivery
        self._loop = delivery._loop
        self.was_stored = delivery.is_stored
        self._waiting: list[tuple[Callable[..., None], tuple[Any, ...]]] = []
        self._lock = threading.Lock()

    def _report(self, call: Callable[..., None], *args: Any) -> None:
        with self._lock:
            self._waiting.append((call, args))
            if len(self._waiting) > 1:
                return  # the batch is on its way to the loop
        self._loop.call_soon_threadsafe(self._deliver_batch)

    def _deliver_batch(self) -> None:
        with self._lock:
            batch, self._waiting = self._waiting, []
        for call, args in batch:
            call(*args)

    def stored(self, session_id: str | None) -> None:
        """The event is stored (its user turn committed): the adapter may acknowledge it."""
        if not self.was_stored:
            self.was_stored = True
            self._report(self._delivery._set_stored, session_id)

    def text(self, delta: str) -> None:
        self._report(self._delivery._push, delta)

    def finish(self, reply: GatewayReply) -> None:
        self.was_stored = True
        self._report(self._delivery._finish, reply)

    def refuse(self, reason: str) -> None:
        """The event could not be stored; nothing may be acknowledged."""
        self._report(self._delivery._refuse, reason)


def _consume_exception(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
