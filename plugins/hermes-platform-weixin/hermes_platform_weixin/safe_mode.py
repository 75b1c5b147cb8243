"""The Official Account's safe mode (安全模式), from its public description: messages in and
passive replies out are encrypted with the EncodingAESKey and signed with the Token.

The AES key is the 43-character EncodingAESKey base64-decoded (with one ``=``), 32 bytes. A
message is ``random(16) + length(4, big-endian) + message + AppID``, padded PKCS#7 to a multiple
of 32 bytes, encrypted AES-256-CBC with the key's first 16 bytes as IV, and base64-encoded;
``msg_signature`` is the hex SHA-1 of the sorted Token, timestamp, nonce and ciphertext. (WeCom
uses the same scheme with the CorpID; the two plugins each keep their own few lines, so that
neither installs the other.)"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os

BLOCK = 32
"""The padding block of the scheme (not AES's 16)."""


class SafeModeError(ValueError):
    """Encrypted text that does not open (not the scheme, or for another AppID)."""


def sha1_signature(*parts: str) -> str:
    """Hex SHA-1 of ``parts`` sorted and joined (``signature`` and ``msg_signature``)."""
    return hashlib.sha1("".join(sorted(parts)).encode()).hexdigest()


def signature_matches(given: str, *parts: str) -> bool:
    """Whether ``given`` is the signature of ``parts`` (compared in constant time)."""
    return hmac.compare_digest(given.encode(), sha1_signature(*parts).encode())


class SafeMode:
    """One account's encryption: its EncodingAESKey and AppID."""

    def __init__(self, encoding_aes_key: str, app_id: str) -> None:
        """ValueError when the key is not 43 base64 characters."""
        try:
            key = base64.b64decode(encoding_aes_key + "=", validate=True)
        except binascii.Error:
            key = b""
        if len(encoding_aes_key) != 43 or len(key) != 32:
            raise ValueError("must be the 43 characters the Official Account platform shows")
        self._key, self.app_id = key, app_id

    def open(self, encrypted: str) -> bytes:
        """The message in ``encrypted`` (:class:`SafeModeError` unless it is of the scheme and
        ends with our AppID)."""
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        try:
            raw = base64.b64decode(encrypted, validate=True)
        except binascii.Error:
            raise SafeModeError("not base64") from None
        if not raw or len(raw) % 16:
            raise SafeModeError("not an AES-CBC message")
        decryptor = Cipher(algorithms.AES(self._key), modes.CBC(self._key[:16])).decryptor()
        plain = decryptor.update(raw) + decryptor.finalize()
        pad = plain[-1]
        if not 1 <= pad <= BLOCK or len(plain) < 20 + pad:
            raise SafeModeError("bad padding")
        content = plain[16:-pad]
        length = int.from_bytes(content[:4], "big")
        if length > len(content) - 4 or content[4 + length :] != self.app_id.encode():
            raise SafeModeError("a message for another AppID")
        return content[4 : 4 + length]

    def seal(self, message: bytes) -> str:
        """``message`` encrypted for the account (a passive reply)."""
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        plain = os.urandom(16) + len(message).to_bytes(4, "big") + message + self.app_id.encode()
        pad = BLOCK - len(plain) % BLOCK
        encryptor = Cipher(algorithms.AES(self._key), modes.CBC(self._key[:16])).encryptor()
        raw = encryptor.update(plain + bytes([pad]) * pad) + encryptor.finalize()
        return base64.b64encode(raw).decode()
