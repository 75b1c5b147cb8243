"""``load_model_settings``: config.yaml's ``model:`` keys, the environment overrides, and the
one line when nothing is configured; ``open_provider`` naming what to install."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent import (
    ModelProviderUnavailable,
    NoModelConfigured,
    load_model_settings,
    open_provider,
)
from hermes_core.config import ConfigError, load_config
from hermes_core.plugins import PluginHost


def config_with(home: Path, text: str):  # type: ignore[no-untyped-def]
    (home / "config.yaml").write_text(text, encoding="utf-8")
    return load_config(home, warn=lambda line: pytest.fail(line))


def test_settings_come_from_the_model_section(home: Path) -> None:
    config = config_with(home, (
        "model:\n  provider: openai\n  base_url: http://127.0.0.1:8080/v1\n  name: qwen\n"
        "  api_key_env: LLAMA_KEY\n  context_tokens: 8192\n  timeout_seconds: 12.5\n"
        "  max_retries: 5\n"
    ))  # fmt: skip
    settings = load_model_settings(config, {"LLAMA_KEY": "sk-local", "OPENAI_API_KEY": "other"})
    assert settings.provider == "openai" and settings.model == "qwen"
    assert settings.base_url == "http://127.0.0.1:8080/v1"
    assert settings.api_key == "sk-local"
    assert (settings.context_tokens, settings.timeout_seconds, settings.max_retries) == (
        8192,
        12.5,
        5,
    )
    assert settings.extra["api_key_env"] == "LLAMA_KEY"


def test_the_environment_overrides_base_url_and_model(home: Path) -> None:
    config = config_with(home, "model:\n  provider: openai\n  base_url: http://a/v1\n  name: a\n")
    settings = load_model_settings(
        config, {"HERMES_MODEL_BASE_URL": "http://b/v1", "HERMES_MODEL": "b", "OPENAI_API_KEY": "k"}
    )
    assert (settings.base_url, settings.model, settings.api_key) == ("http://b/v1", "b", "k")
    assert settings.extra["api_key_env"] == "OPENAI_API_KEY"
    defaults = load_model_settings(config, {})
    assert (defaults.timeout_seconds, defaults.max_retries, defaults.context_tokens) == (
        60.0,
        3,
        None,
    )
    assert defaults.api_key is None


def test_a_base_url_alone_implies_the_openai_provider(home: Path) -> None:
    settings = load_model_settings(load_config(home), {"HERMES_MODEL_BASE_URL": "http://x/v1"})
    assert settings.provider == "openai" and settings.base_url == "http://x/v1"


def test_no_model_configured_is_one_line_telling_how(home: Path) -> None:
    with pytest.raises(NoModelConfigured) as raised:
        load_model_settings(load_config(home), {"HERMES_MODEL": "only-a-name"})
    message = str(raised.value)
    assert "\n" not in message
    for part in ("model.provider", "model.base_url", "model.name", "config.yaml",
                 "HERMES_MODEL_BASE_URL", "HERMES_MODEL", "OPENAI_API_KEY"):  # fmt: skip
        assert part in message


def test_a_wrong_model_value_is_a_config_error_naming_the_key(home: Path) -> None:
    (home / "config.yaml").write_text("model:\n  timeout_seconds: soon\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"model\.timeout_seconds"):
        load_config(home)
    (home / "config.yaml").write_text("model:\n  context_tokens: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"model\.context_tokens"):
        load_config(home)


def test_a_missing_provider_names_the_distribution_to_install(home: Path) -> None:
    settings = load_model_settings(load_config(home), {"HERMES_MODEL_BASE_URL": "http://x/v1"})
    host = PluginHost(load_entry_points=False)
    with pytest.raises(ModelProviderUnavailable, match=r"pip install hermes-model-openai"):
        open_provider(host, settings)
    assert host.active_model() is None


def test_the_installed_provider_opens_and_becomes_the_hosts_model(home: Path) -> None:
    settings = load_model_settings(load_config(home), {"HERMES_MODEL_BASE_URL": "http://x/v1"})
    host = PluginHost()
    provider = open_provider(host, settings)
    assert provider.name == "openai"
    assert host.active_model() == (provider, settings)
