"""Reading ``gateway.platforms.<name>``: every mistake is one line naming the key."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._types import UserFacingError


class SettingsReader:
    """The settings of one platform (its defaults under what config.yaml says), read by name.

    Each reader raises :class:`~hermes_hookspecs.UserFacingError` with one line such as
    ``gateway.platforms.slack.port must be a port number``.
    """

    def __init__(
        self, platform: str, config: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
    ) -> None:
        self.prefix = f"gateway.platforms.{platform}"
        self.values: dict[str, Any] = {**(defaults or {}), **dict(config)}

    def problem(self, name: str, what: str) -> UserFacingError:
        """The one-line error about setting ``name``: ``<prefix>.<name> <what>``."""
        return UserFacingError(f"{self.prefix}.{name} {what}")

    def text(self, name: str, *, required: bool = False, what: str = "") -> str | None:
        """A string setting, or the environment variable its ``<name>_env`` names (how secrets
        stay out of config.yaml); None when neither is set and it is not required."""
        value = self.values.get(name)
        if value is None or value == "":
            variable = self.values.get(f"{name}_env")
            if isinstance(variable, str) and variable:
                value = os.environ.get(variable) or None
        if value is None:
            if required:
                raise self.problem(name, f"is not set{': ' + what if what else ''}")
            return None
        if not isinstance(value, str):
            raise self.problem(name, "must be a string")
        return value

    def secret(self, name: str, what: str) -> str:
        """A required secret (``name`` or ``<name>_env``); ``what`` says where to find it."""
        value = self.values.get(name)
        if not value and self.values.get(f"{name}_env"):
            value = os.environ.get(str(self.values[f"{name}_env"]))
        if not isinstance(value, str) or not value:
            tail = f": {what}" if what else ""
            raise self.problem(name, f"is not set (or {name}_env names an empty variable){tail}")
        return value

    def number(
        self, name: str, *, whole: bool = False, positive: bool = False, must_be: str = ""
    ) -> float:
        """A number setting (``whole``: an integer; ``positive``: above 0, else 0 or more)."""
        value = self.values.get(name)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (whole and not isinstance(value, int))
        ):
            value = None
        if value is None or (value <= 0 if positive else value < 0):
            kind = must_be or (
                ("a positive " if positive else "a ")
                + ("whole number" if whole else "number")
                + ("" if positive else " (0 or more)")
            )
            raise self.problem(name, f"must be {kind}")
        return float(value)

    def optional_seconds(self, name: str) -> float | None:
        """An optional positive number of seconds (None when unset), e.g. ``catch_up_max_age``."""
        if self.values.get(name) is None:
            return None
        return self.number(name, positive=True, must_be="a positive number of seconds")

    def port(self, name: str = "port") -> int:
        """A TCP port (0: any free one)."""
        value = self.values.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 65536:
            raise self.problem(name, "must be a port number")
        return value

    def url(self, name: str) -> str:
        """A non-empty string naming an endpoint."""
        value = self.values.get(name)
        if not isinstance(value, str) or not value:
            raise self.problem(name, "must be a URL")
        return value

    def flag(self, name: str) -> bool:
        """A true/false setting."""
        value = self.values.get(name)
        if not isinstance(value, bool):
            raise self.problem(name, "must be true or false")
        return value

    def names(
        self, name: str, *, what: str = "ids", lower: bool = False, single: bool = True
    ) -> frozenset[str]:
        """A list of strings (``single``: a lone string is a list of one); empty when unset."""
        value = self.values.get(name) or []
        if isinstance(value, str) and single:
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.problem(name, f"must be a list of {what}")
        return frozenset(item.strip().lower() if lower else item for item in value)
