"""Who holds a gateway inbox row: this process's claim, and whether another holder lives.

Gateways sharing one store claim each inbox row before turning it
(:class:`~hermes_core.store.inbox.InboxClaim`). A claim names its process as
``<host>/<pid>/<random>``. A row held by a process of this machine that is gone (killed,
crashed) is taken at once; a holder on another machine cannot be looked at, so its rows are
taken once its claim runs out (it renews them while it lives).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

from hermes_core.store.inbox import CLAIM_SECONDS, InboxClaim

RENEW_SECONDS = CLAIM_SECONDS / 4
"""How often a running gateway renews its claims and looks for rows nobody holds."""


def _host() -> str:
    return "".join(socket.gethostname().split()).replace("/", "_") or "localhost"


class Claimant:
    """This gateway process as a holder of inbox rows."""

    def __init__(self) -> None:
        self.owner = f"{_host()}/{os.getpid()}/{uuid.uuid4().hex[:12]}"

    def claim(self, now: float | None = None) -> InboxClaim:
        """A claim by this process from ``now`` (default: the time) for ``CLAIM_SECONDS``."""
        return InboxClaim(self.owner, (time.time() if now is None else now) + CLAIM_SECONDS)


def holder_alive(owner: str) -> bool:
    """Whether the process ``owner`` names may still be running: False only for a process
    of this machine that is gone (or a zombie); True for any other machine's."""
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != _host() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child its parent has not reaped yet
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return True
    return not state or state[0] not in ("Z", "X")
