"""The adapter kit's ``WebhookIntake`` on its own: a minimal webhook adapter built on it (its
``parse`` a shared-header check and a JSON body), served over real HTTP on 127.0.0.1 in front of
the real gateway core and the stand-in model. Acknowledged once stored, a re-send taken once,
the answer posted once, each refusal one log line."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from gateway_helpers import model_config, running_gateway, title_reply
from hermes_hookspecs import PlatformEvent
from hermes_hookspecs.adapter_kit import Incoming, WebhookIntake, WebhookRefused
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

log = logging.getLogger("hermes.gateway.intake-test")


def test_a_message_is_acknowledged_once_stored_taken_once_and_answered_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    answers: list[tuple[str, str]] = []

    def parse(request: web.Request, body: bytes) -> Incoming | web.StreamResponse | None:
        if request.headers.get("X-Key") != "k":
            raise WebhookRefused(401, "missing or wrong X-Key")
        data = json.loads(body)
        if data.get("check"):
            return web.json_response({"challenge": data["check"]})
        if not data.get("text"):
            return None
        event = PlatformEvent(platform="intake", chat_id="c1", text=data["text"])

        async def send_answer(text: str) -> None:
            answers.append((data["id"], text))

        return Incoming(event, str(data["id"]), send_answer)

    async def scenario() -> None:
        with OpenAIStandIn() as model:
            model.add(title_reply(), Reply(text="Hello back."))
            config = model_config(model)
            async with running_gateway(tmp_path / "home", config, clock=time.time) as gateway:
                intake = WebhookIntake("intake", log, max_body_bytes=256, again="sent again")

                async def receive(request: web.Request) -> web.StreamResponse:
                    return await intake.receive(request, parse)

                place = {"host": "127.0.0.1", "port": 0, "path": "/hook"}
                url = await intake.serve(gateway.deliver, place, receive)
                key = {"X-Key": "k"}
                try:
                    async with aiohttp.ClientSession() as client:

                        async def post(body: object, headers: dict[str, str]) -> tuple[int, str]:
                            async with client.post(url, json=body, headers=headers) as answer:
                                return answer.status, await answer.text()

                        message = {"id": "m1", "text": "hi there"}
                        assert await post(message, key) == (200, "{}")
                        assert await post(message, key) == (200, "{}")  # a re-send
                        assert await post({"check": "abc"}, key) == (200, '{"challenge": "abc"}')
                        assert await post({"id": "m2"}, key) == (200, "{}")  # nothing to deliver
                        assert (await post(message, {}))[0] == 401
                        assert (await post({"text": "x" * 300}, key))[0] == 413
                        deadline = time.monotonic() + 30
                        while not answers:
                            assert time.monotonic() < deadline, "no answer was posted"
                            await asyncio.sleep(0.05)
                finally:
                    await intake.stop()
                assert answers == [("m1", "Hello back.")]

    with caplog.at_level(logging.WARNING, logger=log.name):
        asyncio.run(scenario())
    refusals = [r.getMessage() for r in caplog.records if "refused a request" in r.getMessage()]
    assert len(refusals) == 2
    assert refusals[0].startswith("intake refused a request from 127.0.0.1 (HTTP 401): missing")
    assert "(HTTP 413)" in refusals[1]
    with SessionStore.open(tmp_path / "home") as store:
        (session,) = [s for s in store.select_sessions() if s.source == "intake"]
        assert [m.content for m in store.messages(session.id) if m.role == "user"] == ["hi there"]
