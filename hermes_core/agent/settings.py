"""Which model the agent talks to: ``model:`` in ``config.yaml`` with environment overrides,
and the provider plugin that reaches it.

``HERMES_MODEL_BASE_URL`` and ``HERMES_MODEL`` override ``model.base_url`` and ``model.name``;
the key is read from the environment variable named by ``model.api_key_env``
(``OPENAI_API_KEY`` unless configured). See docs/models.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hermes_hookspecs import ModelProvider, ModelSettings, UserFacingError

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.plugins import PluginHost

BASE_URL_ENV = "HERMES_MODEL_BASE_URL"
MODEL_ENV = "HERMES_MODEL"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
IMPLIED_PROVIDER = "openai"
"""The provider used when ``model.provider`` is unset but a base URL is given."""


class NoModelConfigured(UserFacingError):
    """No model provider is configured; the message says in one line how to configure one."""


class ModelProviderUnavailable(UserFacingError):
    """The configured provider is not installed (or two plugins claim its name)."""


def no_model_message(config_path: str = "config.yaml") -> str:
    """The one line telling a person how to configure a model."""
    return (
        f"no model is configured: set model.provider (openai), model.base_url and model.name "
        f"in {config_path}, or the environment variables {BASE_URL_ENV} and {MODEL_ENV} "
        f"(with the key in {DEFAULT_API_KEY_ENV} when the endpoint needs one)"
    )


def load_model_settings(config: Config, env: Mapping[str, str]) -> ModelSettings:
    """The model settings from ``config`` (``model.*`` keys) with ``env`` overriding.

    ``model.provider`` may be left out when a base URL is given (config or env): it is then
    ``openai``, the OpenAI-compatible provider. Without either, :class:`NoModelConfigured`.
    ``ModelSettings.extra`` carries ``api_key_env`` (the variable's name, so a provider can
    name it when the key is refused).
    """
    base_url = _text(env.get(BASE_URL_ENV)) or config["model.base_url"]
    model = _text(env.get(MODEL_ENV)) or config["model.name"]
    provider = config["model.provider"] or (IMPLIED_PROVIDER if base_url else None)
    if provider is None:
        raise NoModelConfigured(no_model_message(str(config.path or "config.yaml")))
    key_env = config["model.api_key_env"] or DEFAULT_API_KEY_ENV
    return ModelSettings(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=_text(env.get(key_env)),
        timeout_seconds=float(config["model.timeout_seconds"]),
        max_retries=int(config["model.max_retries"]),
        context_tokens=config["model.context_tokens"],
        extra={"api_key_env": key_env},
    )


def open_provider(host: PluginHost, settings: ModelSettings) -> ModelProvider:
    """The registered provider named by ``settings.provider``.

    It also becomes the model the host's automatic-title plugin uses (SPEC S5): once a chat
    or the gateway has a model, its sessions get model-written titles.
    """
    from hermes_core.plugins import MissingComponent, PluginError

    try:
        provider = host.model_provider(settings.provider)
    except (MissingComponent, PluginError) as error:
        raise ModelProviderUnavailable(str(error)) from None
    host.use_model(provider, settings)
    return provider


def _text(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None
