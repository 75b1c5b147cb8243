"""The entry point: registers the ``openai`` provider (cheap to import; no SDK here)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import ModelProvider, hookimpl

from .provider import OpenAIProvider


@hookimpl
def hermes_register_model_providers(register: Callable[[ModelProvider], None]) -> None:
    """Register the OpenAI-compatible provider under the name ``openai``."""
    register(OpenAIProvider())
