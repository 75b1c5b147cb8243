"""Request signatures: HMAC-SHA256 over ``<timestamp>.<body>`` with the shared secret.

A request carries ``X-Hermes-Timestamp`` (POSIX seconds) and ``X-Hermes-Signature:
sha256=<hex>``. It is refused when the signature is missing or wrong, when its timestamp is
outside the replay window, or when the same signature was already accepted inside the window
(the signature is the nonce: the same signed request twice is a replay).
"""

from __future__ import annotations

import hmac
import threading

TIMESTAMP_HEADER = "X-Hermes-Timestamp"
SIGNATURE_HEADER = "X-Hermes-Signature"
SIGNATURE_PREFIX = "sha256="


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Hermes-Signature`` value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, "sha256")
    return SIGNATURE_PREFIX + digest.hexdigest()


def signed_headers(secret: str, body: bytes, now: float) -> dict[str, str]:
    """The headers that sign ``body`` now (what a sender, or our callback, adds)."""
    timestamp = str(int(now))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)}


class SignatureCheck:
    """Verifies requests and remembers accepted signatures for the replay window."""

    def __init__(self, secret: str, window_seconds: float) -> None:
        self._secret = secret
        self._window = window_seconds
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def problem(
        self, timestamp: str | None, signature: str | None, body: bytes, now: float
    ) -> str | None:
        """Why the request must be refused, or None when it is genuine and fresh."""
        if not timestamp or not signature:
            return f"unsigned request (no {TIMESTAMP_HEADER} / {SIGNATURE_HEADER} header)"
        try:
            moment = float(timestamp)
        except ValueError:
            return f"bad {TIMESTAMP_HEADER} header"
        expected = sign(self._secret, timestamp, body)
        if not hmac.compare_digest(expected, signature.strip()):
            return "bad signature"
        if abs(now - moment) > self._window:
            return f"timestamp outside the {self._window:.0f}s replay window"
        with self._lock:
            for seen, at in list(self._seen.items()):
                if now - at > 2 * self._window:
                    del self._seen[seen]
            if expected in self._seen:
                return "replayed request (this signature was already accepted)"
            self._seen[expected] = now
        return None

    def forget(self, signature: str) -> None:
        """Accept this signature again: its request was not taken (the gateway refused it),
        so the sender's retry is not a replay."""
        with self._lock:
            self._seen.pop(signature.strip(), None)
