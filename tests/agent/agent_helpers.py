"""Settings and engines pointing at the stand-in OpenAI endpoint, for the agent tests.

A module of its own (not conftest) so test modules import it by a unique name.
"""

from __future__ import annotations

from hermes_hookspecs import ModelSettings
from hermes_model_openai.provider import OpenAIProvider
from standins.openai_server import OpenAIStandIn

from hermes_core.agent import Toolbox, TurnEngine
from hermes_core.store import SessionStore

API_KEY = "sk-standin-test"


def settings_for(server: OpenAIStandIn, **changes: object) -> ModelSettings:
    """Settings pointing at the stand-in, with quick retries and timeouts."""
    values: dict[str, object] = {
        "provider": "openai",
        "model": "standin-model",
        "base_url": server.base_url,
        "api_key": API_KEY,
        "timeout_seconds": 5.0,
        "max_retries": 2,
        "extra": {"api_key_env": "OPENAI_API_KEY"},
    }
    values.update(changes)
    return ModelSettings(**values)  # type: ignore[arg-type]


def engine_with(store: SessionStore, server: OpenAIStandIn, **changes: object) -> TurnEngine:
    """An engine whose settings differ from the default fixture's."""
    return TurnEngine(
        store, OpenAIProvider(), settings_for(server, **changes), tools=Toolbox.default(store)
    )
