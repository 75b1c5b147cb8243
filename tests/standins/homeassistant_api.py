"""A STAND-IN for Home Assistant — the two ends of its REST API the ``homeassistant`` plugin
meets — for tests only.

It is not Home Assistant: it is written from Home Assistant's public REST API and conversation
API documentation (https://developers.home-assistant.io/docs/api/rest/,
https://developers.home-assistant.io/docs/intent_conversation_api/) and binds 127.0.0.1 only.

- Home Assistant called: ``POST /api/services/notify/<target>`` with ``Authorization: Bearer
  <long-lived access token>`` and a JSON body (``message``…); answers ``200`` and a JSON list
  (the states that changed: none here), ``401`` for a wrong token, ``400`` for a body that is
  not a JSON object with a ``message``. The calls are kept in :attr:`notified`.
- Home Assistant calling: :func:`converse` POSTs what Home Assistant's conversation pipeline
  holds (``text``, ``conversation_id``, ``language`` and the call's ``context``) to a
  conversation endpoint with its bearer token, as a ``rest_command`` would.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

from aiohttp import web

from standins.callbacks import wait_for_count
from standins.threaded import ThreadedStandIn

ACCESS_TOKEN = "standin-long-lived-access-token"


class HomeAssistantStandIn(ThreadedStandIn):
    """Home Assistant's ``notify`` actions over REST."""

    thread_name = "homeassistant-standin"

    def __init__(self) -> None:
        super().__init__()
        self.notified: list[tuple[str, dict[str, Any]]] = []
        self._condition = threading.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/api/services/notify/{target}", self._notify)
        await self._serve_app(app)

    async def _notify(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {ACCESS_TOKEN}":
            return web.json_response({"message": "Unauthorized"}, status=401)
        try:
            data = json.loads(await request.read())
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("message"), str):
            return web.json_response({"message": "Invalid data"}, status=400)
        with self._condition:
            self.notified.append((request.match_info["target"], data))
            self._condition.notify_all()
        return web.json_response([])

    def wait_for_notified(self, count: int, timeout: float = 30.0) -> list[tuple[str, Any]]:
        return wait_for_count(self._condition, self.notified, count, timeout)


def converse(
    url: str,
    token: str,
    text: str,
    *,
    conversation_id: str | None = None,
    user_id: str | None = None,
    context_id: str | None = None,
    language: str | None = None,
    timeout: float = 60.0,
) -> tuple[int, dict[str, Any]]:
    """One conversation call as Home Assistant makes it; (status, JSON answer)."""
    body: dict[str, Any] = {"text": text, "context": {"id": context_id, "user_id": user_id}}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    if language is not None:
        body["language"] = language
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def speech(answer: dict[str, Any]) -> str:
    """The spoken text of a conversation result."""
    return str(answer["response"]["speech"]["plain"]["speech"])
