"""WeCom's callback encryption (the scheme its sample code calls WXBizMsgCrypt), from its public
description: the AES key is the 43-character EncodingAESKey base64-decoded (with one ``=``),
32 bytes; a message is ``random(16) + length(4, big-endian) + message + CorpID``, padded
PKCS#7 to a multiple of 32 bytes, encrypted AES-256-CBC with the key's first 16 bytes as IV,
and base64-encoded. ``msg_signature`` is the hex SHA-1 of the sorted token, timestamp, nonce
and encrypted text, joined."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os

BLOCK = 32
"""The padding block of the scheme (not AES's 16)."""


class CryptoError(ValueError):
    """Encrypted text that does not decrypt to a message of the scheme."""


def aes_key(encoding_aes_key: str) -> bytes:
    """The AES key of an EncodingAESKey (ValueError when it is not 43 base64 characters)."""
    if len(encoding_aes_key) != 43:
        raise ValueError("must be the 43 characters WeCom shows")
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except binascii.Error:
        raise ValueError("must be the 43 characters WeCom shows") from None
    return key


def signature(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    """``msg_signature``: hex SHA-1 of the four strings sorted and joined."""
    return hashlib.sha1("".join(sorted((token, timestamp, nonce, encrypted))).encode()).hexdigest()


def signed(expected: str, token: str, timestamp: str, nonce: str, encrypted: str) -> bool:
    """Whether ``expected`` is the signature of the rest (compared in constant time)."""
    return hmac.compare_digest(
        expected.encode(), signature(token, timestamp, nonce, encrypted).encode()
    )


def decrypt(encrypted: str, key: bytes) -> tuple[bytes, str]:
    """The message in ``encrypted`` and the receiver id at its end (the CorpID);
    :class:`CryptoError` when it is not of the scheme."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    try:
        raw = base64.b64decode(encrypted, validate=True)
    except binascii.Error:
        raise CryptoError("not base64") from None
    if not raw or len(raw) % 16:
        raise CryptoError("not an AES-CBC message")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = decryptor.update(raw) + decryptor.finalize()
    pad = plain[-1]
    if not 1 <= pad <= BLOCK or len(plain) < 20 + pad:
        raise CryptoError("bad padding")
    content = plain[16:-pad]
    length = int.from_bytes(content[:4], "big")
    if length > len(content) - 4:
        raise CryptoError("a length past the end")
    try:
        receiver = content[4 + length :].decode()
    except UnicodeDecodeError:
        raise CryptoError("a receiver id that is not text") from None
    return content[4 : 4 + length], receiver


def encrypt(message: bytes, key: bytes, receiver: str) -> str:
    """``message`` encrypted for ``receiver`` (a passive reply, or a test's callback)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    plain = os.urandom(16) + len(message).to_bytes(4, "big") + message + receiver.encode()
    pad = BLOCK - len(plain) % BLOCK
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    raw = encryptor.update(plain + bytes([pad]) * pad) + encryptor.finalize()
    return base64.b64encode(raw).decode()
