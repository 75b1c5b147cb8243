"""QQ Bot webhook signatures: Ed25519 with a key derived from the bot's secret.

As the QQ Bot open platform documents it: the private key's 32-byte seed is the bot secret
repeated until it is at least 32 bytes long, then cut to 32. Each callback carries
``X-Signature-Timestamp`` and ``X-Signature-Ed25519`` (hex), a signature of the timestamp
followed by the raw body. The callback-address check (op 13) is answered with a signature of
``event_ts`` followed by ``plain_token``.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

TIMESTAMP_HEADER = "X-Signature-Timestamp"
SIGNATURE_HEADER = "X-Signature-Ed25519"


def private_key(secret: str) -> Ed25519PrivateKey:
    """The bot's Ed25519 key, from its secret."""
    seed = secret.encode("utf-8")
    while len(seed) < 32:
        seed += seed
    return Ed25519PrivateKey.from_private_bytes(seed[:32])


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    """The hex signature of ``message``."""
    return key.sign(message).hex()


def verified(
    key: Ed25519PrivateKey, timestamp: str | None, signature: str | None, body: bytes
) -> bool:
    """True when ``signature`` is the key's signature of ``timestamp`` + ``body``."""
    if not timestamp or not signature:
        return False
    try:
        key.public_key().verify(bytes.fromhex(signature), timestamp.encode() + body)
    except (ValueError, InvalidSignature):
        return False
    return True
