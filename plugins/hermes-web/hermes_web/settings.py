"""How one ``hermes serve`` was asked to behave."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_core.loopback import LOOPBACK

DEFAULT_PORT = 8742


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """The command's options, checked, and the secrets drawn at start."""

    port: int
    """The port listened on (the real one once bound, for ``--port 0``)."""
    token: str
    """The random token of the printed URL; a browser keeps it as a cookie."""
    csrf: str
    """The random value every write must carry in the ``X-Hermes-CSRF`` header."""
    allow_writes: bool = False
    """Offer rename, pin and archive."""
    redact: bool = False
    """Apply the redaction rules to every page and answer."""

    @property
    def cookie_name(self) -> str:
        """Cookies are not kept per port: each server names its own."""
        return f"hermes_serve_{self.port}"

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """``Host`` headers that name this server (anything else may be DNS rebinding)."""
        return frozenset({f"{LOOPBACK}:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.allowed_hosts)
