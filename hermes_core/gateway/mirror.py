"""``$HERMES_HOME/sessions/sessions.json``: the legacy mirror of the routing index (SPEC G5).

The index itself is the ``gateway_routing`` table; this file is written for older tools that
read it, when ``gateway.write_sessions_json`` is true (the default), and is never read back as
the index. It holds gateway entries only — it is not the list of sessions. Each write goes to a
temporary file in the same folder, is flushed to disk, then renamed over the old one, so a
reader never sees half a file; a write that fails (a full disk) leaves the old file and no
temporary one, and is one warning line — the gateway goes on.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from pathlib import Path

from hermes_core.files import AtomicFile
from hermes_core.files.errors import reason
from hermes_core.store.routed_sessions import Route

log = logging.getLogger("hermes.gateway")

MIRROR_README = (
    "Legacy mirror of the gateway routing index (the gateway_routing table of state.db). "
    "Gateway entries only: 'hermes sessions list' reads state.db, which holds every session. "
    "Switch it off with gateway.write_sessions_json: false."
)


def mirror_path(home: Path) -> Path:
    """Where the mirror lives under the Hermes home."""
    return home / "sessions" / "sessions.json"


class SessionsMirror:
    """Writes the mirror; one instance is shared by every worker thread of a gateway."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def write(self, routes: Iterable[Route]) -> None:
        """Replace the mirror with ``routes`` (atomically: temp file, fsync, rename)."""
        document: dict[str, object] = {"_README": MIRROR_README}
        for route in routes:
            if route.session_id is None:
                continue
            document[route.session_key] = {
                "session_key": route.session_key,
                "session_id": route.session_id,
                "platform": route.platform,
                **route.origin,
                "updated_at": route.updated_at,
            }
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with AtomicFile(self.path) as out:  # created 0600
                    out.write(text.encode("utf-8"))
            except OSError as error:
                # The index is the table; a mirror that falls behind (a full disk) must not
                # fail the turn that changed a route. The next change writes it again.
                log.warning("%s was not updated: %s", self.path, reason(error))
