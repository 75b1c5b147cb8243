"""``$HERMES_HOME/config.yaml``: defaults in code, values checked by key.

The file is optional. It is read with ``yaml.safe_load``; an unknown key is warned about (one
stderr line), a value of the wrong type is a :class:`ConfigError` naming the key.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.terminal_text import terminal_safe

CONFIG_FILE_NAME = "config.yaml"


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and key."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One known key: its default and how to check a value."""

    default: Any
    check: Callable[[Any], bool]
    expected: str


def _boolean() -> Setting:
    return Setting(False, lambda v: isinstance(v, bool), "true or false")


def _whole(default: int, minimum: int = 0) -> Setting:
    return Setting(
        default,
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum,
        f"a whole number ≥ {minimum}",
    )


def _choice(default: str, *choices: str) -> Setting:
    return Setting(default, lambda v: v in choices, " or ".join(choices))


def _mapping_of_mappings(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(name, str) and isinstance(item, Mapping | None) for name, item in value.items()
    )


def _with_default(setting: Setting, default: Any) -> Setting:
    return Setting(default, setting.check, setting.expected)


PRICE_KEYS = ("input_per_mtok", "output_per_mtok")
"""What each model of ``insights.prices`` gives: USD per million input and output tokens."""
OPTIONAL_PRICE_KEYS = ("cache_read_per_mtok", "cache_write_per_mtok")
"""What it may give too: USD per million tokens read from / written to the prompt cache
(priced as input when absent)."""


def _is_price_table(value: Any) -> bool:
    """``{model name: {input_per_mtok: number ≥ 0, output_per_mtok: number ≥ 0}}``, each
    entry optionally with ``cache_read_per_mtok`` and ``cache_write_per_mtok`` (numbers ≥ 0)."""
    if not isinstance(value, Mapping):
        return False
    for model, price in value.items():
        if not isinstance(model, str) or not model.strip() or not isinstance(price, Mapping):
            return False
        if not set(PRICE_KEYS) <= set(price) <= set(PRICE_KEYS + OPTIONAL_PRICE_KEYS):
            return False
        for number in price.values():
            if isinstance(number, bool) or not isinstance(number, int | float):
                return False
            if not 0 <= number < float("inf"):
                return False
    return True
def _optional_text(default: str | None = None) -> Setting:
    return Setting(
        default, lambda v: v is None or (isinstance(v, str) and v.strip() != ""), "a text"
    )


def _optional_whole(minimum: int = 1) -> Setting:
    return Setting(
        None,
        lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= minimum),
        f"a whole number ≥ {minimum}",
    )


def _hours(default: float) -> Setting:
    return Setting(
        default,
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < float("inf"),
        "a number of hours ≥ 0",
    )


def _seconds(default: float) -> Setting:
    return Setting(
        default,
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0,
        "a number of seconds > 0",
    )


SETTINGS: Mapping[str, Setting] = {
    "sessions.auto_prune": _boolean(),
    "sessions.retention_days": _whole(90),
    "sessions.vacuum_after_prune": _with_default(_boolean(), True),
    "sessions.min_vacuum_interval_days": _whole(30),
    "sessions.min_interval_hours": _whole(24),
    "sessions.auto_archive": _boolean(),
    "sessions.auto_archive_idle_days": _whole(30, minimum=1),
    "session.terminal_continue": _with_default(_boolean(), True),
    "display.resume_display": _choice("full", "full", "minimal"),
    "gateway.write_sessions_json": _with_default(_boolean(), True),
    "gateway.platforms": Setting(
        {}, lambda v: _mapping_of_mappings(v), "a mapping of platform name → its settings"
    ),
    "gateway.identity_aliases": Setting(
        {},
        lambda v: _mapping_of_mappings(v)
        and all(
            isinstance(m, Mapping) and all(isinstance(c, str) for c in m.values())
            for m in v.values()
        ),
        "a mapping of platform name → {alias: canonical id}",
    ),
    "gateway.workers": _whole(8, minimum=1),
    "gateway.handoff_timeout_seconds": _whole(60, minimum=1),
    "group_sessions_per_user": _with_default(_boolean(), True),
    "thread_sessions_per_user": _boolean(),
    "session_reset.mode": _choice("none", "none", "idle", "daily", "both"),
    "session_reset.idle_minutes": _whole(1440, minimum=1),
    "store.url": Setting(
        None,
        lambda v: v is None or (isinstance(v, str) and bool(v.strip())),
        "a store URL such as sqlite:///path/to/state.db or postgresql://host/database",
    ),
    # Rolling backups of a SQLite store (hermes_core/store/backups.py); 0 turns them off.
    "store.backups.interval_hours": _hours(24),
    "store.backups.keep": _whole(3),
    "store.backups.folder": _optional_text(),
    "session_reset.daily_hour": Setting(
        4, lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 23, "an hour 0-23"
    ),
    "insights.prices": Setting(
        {},
        _is_price_table,
        "a mapping of model names to {input_per_mtok: USD, output_per_mtok: USD} (optionally "
        "cache_read_per_mtok, cache_write_per_mtok too), all numbers ≥ 0",
    ),
    # The model behind chat, the gateway and model titles (docs/models.md).
    "model.provider": _optional_text(),
    "model.base_url": _optional_text(),
    "model.name": _optional_text(),
    "model.api_key_env": _with_default(_optional_text(), "OPENAI_API_KEY"),
    "model.context_tokens": _optional_whole(minimum=1),
    "model.timeout_seconds": _seconds(60.0),
    "model.max_retries": _whole(3),
}


class Config:
    """Effective settings: the file's values over the defaults."""

    def __init__(self, values: Mapping[str, Any] | None = None, path: Path | None = None) -> None:
        self.path = path
        self._values = {key: setting.default for key, setting in SETTINGS.items()}
        self._values.update(values or {})

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and not any(k == dotted for k in SETTINGS):
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def load_config(home: Path, *, warn: Callable[[str], None] | None = None) -> Config:
    """Read ``home/config.yaml`` (absent → defaults)."""
    path = home / CONFIG_FILE_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config(path=path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read it ({error})") from error
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" line {where.line + 1}" if where is not None else ""
        raise ConfigError(f"{path}:{line} is not valid YAML") from error
    if data is None:
        return Config(path=path)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    warn = warn or (lambda line: print(terminal_safe(line), file=sys.stderr))
    values: dict[str, Any] = {}
    for key, value in _flatten(data).items():
        setting = SETTINGS.get(key)
        if setting is None:
            warn(f"hermes: {path}: unknown setting '{key}' ignored")
            continue
        if not setting.check(value):
            raise ConfigError(f"{path}: {key} must be {setting.expected} (got {value!r})")
        values[key] = value
    return Config(values, path=path)
