"""Running the gateway core in-process (real store, real provider plugin, stand-in model over
HTTP) and helpers shared by the gateway tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_hookspecs import GatewayReply, Message, PlatformEvent, Session, hookimpl
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.agent import load_model_settings, open_provider
from hermes_core.config import Config
from hermes_core.gateway.policy import ResetPolicy
from hermes_core.gateway.routing import RoutingRules
from hermes_core.gateway.runner import Gateway
from hermes_core.gateway.worker import EventWorker
from hermes_core.plugins import PluginHost

TITLE_MATCH = "short descriptive title"


def title_reply() -> Reply:
    """Answers every automatic-title request, so scripted answers go to the turns."""
    return Reply(text="Gateway test chat", match=TITLE_MATCH, times=None)


class ResetRecorder:
    """A plugin that remembers each ``hermes_session_before_reset`` call."""

    def __init__(self) -> None:
        self.calls: list[tuple[Session, list[Message]]] = []

    @hookimpl
    def hermes_session_before_reset(self, session: Session, messages: list[Message]) -> None:
        self.calls.append((session, list(messages)))


def model_config(standin: OpenAIStandIn, **values: Any) -> Config:
    """A config pointing the model at the stand-in, plus ``values``."""
    return Config(
        {
            "model.provider": "openai",
            "model.base_url": standin.base_url,
            "model.name": "standin-model",
            "model.max_retries": 0,
            "model.timeout_seconds": 10.0,
            **values,
        }
    )


@contextlib.asynccontextmanager
async def running_gateway(
    home: Path,
    config: Config,
    *,
    clock: Callable[[], float],
    plugins: Iterable[tuple[str, object]] = (),
) -> AsyncIterator[Gateway]:
    """The gateway core with no adapter: tests call ``deliver`` as an adapter would."""
    host = PluginHost(extra_plugins=plugins)
    settings = load_model_settings(config, {"OPENAI_API_KEY": "sk-test"})
    worker = EventWorker(
        home,
        host,
        open_provider(host, settings),
        settings,
        rules=RoutingRules.from_config(config),
        policy=ResetPolicy.from_config(config),
        mirror=None,
        clock=clock,
    )
    gateway = Gateway(worker, workers=4)
    await gateway.start({}, {})
    try:
        yield gateway
    finally:
        await gateway.stop()


async def say(gateway: Gateway, text: str, **fields: Any) -> GatewayReply:
    """Deliver one webhook-style event and wait for its answer."""
    values: dict[str, Any] = {"platform": "webhook", "chat_id": "chat-1", "text": text}
    values.update(fields)
    delivery = gateway.deliver(PlatformEvent(**values))
    await delivery.stored()
    return await delivery.reply()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def user_texts(messages: Iterable[Message]) -> list[str]:
    return [m.content for m in messages if m.role == "user"]
