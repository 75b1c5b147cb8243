"""A STAND-IN for signal-cli's daemon HTTP API (``signal-cli daemon --http``), for tests only.

It is not signal-cli: it is written from signal-cli's documentation (the man page
signal-cli-jsonrpc(5) and signal-cli(1)) for what the ``hermes-platform-signal`` adapter uses,
and binds 127.0.0.1 only. It serves:

- ``GET /api/v1/check`` — 200 while it runs;
- ``POST /api/v1/rpc`` — JSON-RPC 2.0, one request or a batch: ``send`` (``recipient``, a
  number or ACI or a list of them, or ``groupId``; ``message``) answers ``{"timestamp": …}``;
  ``version``; another method is error -32601 "Method not implemented", bad params -32602;
  an ``account`` param other than the daemon's is -32602 "Specified account does not exist";
- ``GET /api/v1/events`` — a Server-Sent Events stream: each incoming message is an event
  ``id:<n>``, ``event:receive``, ``data:{"envelope": {…}, "account": …}`` (the envelope:
  ``source``, ``sourceNumber``, ``sourceUuid``, ``sourceName``, ``sourceDevice``,
  ``timestamp``, ``dataMessage`` with ``timestamp``, ``message`` and ``groupInfo.groupId`` in a
  group), and ``:`` keep-alive comments. The last 1000 events are kept: a client that connects
  with ``Last-Event-ID`` first gets the kept events after that id (all of them when the id is
  unknown); without it, only new events.

The test plays the people writing to the account (:meth:`SignalStandIn.user_says`), breaks
the stream (:meth:`drop_streams`) and reads what the account sent (:attr:`sent`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import uuid
from collections import deque
from typing import Any

from aiohttp import web

from standins.threaded import ThreadedStandIn

ACCOUNT = "+15550100000"


class SignalStandIn(ThreadedStandIn):
    """The stand-in daemon (aiohttp on its own thread and event loop)."""

    thread_name = "signal-standin"

    def __init__(self, account: str = ACCOUNT, keep_alive_seconds: float = 1.0) -> None:
        super().__init__()
        self.account = account
        self.keep_alive_seconds = keep_alive_seconds
        self.sent: list[dict[str, Any]] = []
        """Every ``send`` the account made (its params, in order)."""
        self.stream_requests: list[str | None] = []
        """The ``Last-Event-ID`` of every stream opened (None: none sent)."""
        self._kept: deque[tuple[int, str]] = deque(maxlen=1000)
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._streams: set[asyncio.Queue[tuple[int, str] | None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # ------------------------------------------------------------------ test side

    def person(self, name: str, number: str) -> dict[str, str]:
        """Someone with a number and an ACI."""
        return {"name": name, "number": number, "uuid": str(uuid.uuid4())}

    def user_says(
        self, person: dict[str, str], text: str, *, group_id: str | None = None,
        timestamp: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """``person`` writes ``text`` (in the group ``group_id``): the envelope, streamed."""
        stamp = timestamp if timestamp is not None else int(time.time() * 1000)
        data: dict[str, Any] = {"timestamp": stamp, "message": text, "expiresInSeconds": 0,
                                "viewOnce": False, "mentions": [], "attachments": []}  # fmt: skip
        if group_id is not None:
            data["groupInfo"] = {"groupId": group_id, "groupName": "Team", "revision": 1,
                                 "type": "DELIVER"}  # fmt: skip
        envelope = {"source": person["number"], "sourceNumber": person["number"],
                    "sourceUuid": person["uuid"], "sourceName": person["name"],
                    "sourceDevice": 1, "timestamp": stamp, "serverReceivedTimestamp": stamp,
                    "serverDeliveredTimestamp": stamp, "dataMessage": data}  # fmt: skip
        self.emit({"envelope": envelope, "account": self.account})
        return envelope

    def emit(self, payload: dict[str, Any]) -> int:
        """Stream one ``receive`` event (kept for replay); its id."""
        with self._lock:
            event = (next(self._ids), json.dumps(payload))
            self._kept.append(event)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._broadcast, event)
        return event[0]

    def drop_streams(self) -> None:
        """Close every open event stream (a network break)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._broadcast, None)

    def wait_for_sent(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the account has sent ``count`` messages; all it sent so far."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.sent) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.sent)} messages sent, not {count}")
                self._lock.wait(left)
            return list(self.sent)

    def streams_opened(self) -> int:
        with self._lock:
            return len(self.stream_requests)

    # ------------------------------------------------------------------ server side

    def _broadcast(self, event: tuple[int, str] | None) -> None:
        for queue in list(self._streams):
            queue.put_nowait(event)

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v1/check", self._check)
        app.router.add_post("/api/v1/rpc", self._rpc)
        app.router.add_get("/api/v1/events", self._events)
        await self._serve_app(app)

    async def _close(self) -> None:
        self._broadcast(None)
        await super()._close()

    async def _check(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        last = request.headers.get("Last-Event-ID")
        queue: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue()
        with self._lock:
            self.stream_requests.append(last)
            kept = list(self._kept)
        if last is not None:
            known = [i for i, (event_id, _) in enumerate(kept) if str(event_id) == last]
            for event in kept[known[0] + 1 :] if known else kept:
                queue.put_nowait(event)
        self._streams.add(queue)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), self.keep_alive_seconds)
                except TimeoutError:
                    await response.write(b":\n")
                    continue
                if event is None:
                    break
                await response.write(f"id:{event[0]}\nevent:receive\ndata:{event[1]}\n\n".encode())
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._streams.discard(queue)
        return response

    async def _rpc(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response(_error(None, -32700, "Parse error"))
        if isinstance(body, list):
            return web.json_response([self._answer(item) for item in body])
        return web.json_response(self._answer(body))

    def _answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _error(None, -32600, "method field must be set")
        rid, params = request.get("id"), dict(request.get("params") or {})
        account = params.pop("account", None)
        if account is not None and account != self.account:
            return _error(rid, -32602, "Specified account does not exist")
        if request["method"] == "version":
            return {"jsonrpc": "2.0", "result": {"version": "0.13.0-standin"}, "id": rid}
        if request["method"] != "send":
            return _error(rid, -32601, "Method not implemented")
        recipients = params.get("recipient")
        if isinstance(recipients, str):
            recipients = [recipients]
        message = params.get("message")
        if not isinstance(message, str) or not (recipients or params.get("groupId")):
            return _error(rid, -32602, "No recipients given")
        stamp = int(time.time() * 1000)
        with self._lock:
            self.sent.append({**params, "timestamp": stamp})
            self._lock.notify_all()
        return {"jsonrpc": "2.0", "result": {"timestamp": stamp, "results": []}, "id": rid}


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message, "data": None}, "id": rid}
