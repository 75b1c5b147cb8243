"""Where an adapter keeps its place in a platform's stream between runs (a Matrix sync token,
the last message id of a channel), so what was sent while the gateway was down is read at
the next start."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

STATE_FOLDER = "state_folder"
"""The key the gateway adds to an adapter's settings: a folder under the home that is the
adapter's own (``$HERMES_HOME/gateway/platforms/<name>``)."""


class CursorFile:
    """Named cursors in one small JSON file, each save written whole (a temporary file renamed
    over it, synced first), so a crash leaves the old cursors or the new ones."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._values: dict[str, str] | None = None

    @classmethod
    def of(cls, settings: Mapping[str, Any], name: str = "cursors.json") -> CursorFile | None:
        """The cursor file in the adapter's state folder; None when the gateway gave none (an
        adapter started by other code: nothing is remembered)."""
        folder = settings.get(STATE_FOLDER)
        return cls(Path(str(folder)) / name) if folder else None

    def get(self, key: str) -> str | None:
        """The cursor saved under ``key``, if any (an unreadable file counts as none)."""
        return self._load().get(key)

    def keys(self, prefix: str = "") -> list[str]:
        """The names of the saved cursors starting with ``prefix``."""
        return sorted(key for key in self._load() if key.startswith(prefix))

    def save(self, key: str, value: str) -> None:
        """Remember ``value`` under ``key``."""
        values = self._load()
        if values.get(key) == value:
            return
        values[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".cursors-", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(values, out, indent=1, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _load(self) -> dict[str, str]:
        if self._values is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            self._values = (
                {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
            )
        return self._values
