"""The callback encryption WeCom and Weixin Official Accounts share, as their public docs
describe it, for the test stand-ins to sign and encrypt what they send (test code, written from
the docs rather than from the plugins, so a test checks one against the other).

Key: base64 of the 43-character EncodingAESKey plus ``=``. Plaintext: 16 random bytes, the
message length as 4 big-endian bytes, the message, the receiver id (CorpID or AppID); padded
PKCS#7 to 32 bytes; AES-256-CBC, IV the key's first 16 bytes; base64. Signature: hex SHA-1 of
the sorted strings joined.
"""

from __future__ import annotations

import base64
import hashlib
import os

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def sha1_signature(*parts: str) -> str:
    """Hex SHA-1 of ``parts`` sorted and joined."""
    return hashlib.sha1("".join(sorted(parts)).encode()).hexdigest()


def key_of(encoding_aes_key: str) -> bytes:
    """The AES key of an EncodingAESKey."""
    return base64.b64decode(encoding_aes_key + "=")


def seal(message: bytes, encoding_aes_key: str, receiver: str) -> str:
    """``message`` encrypted for ``receiver``."""
    key = key_of(encoding_aes_key)
    plain = os.urandom(16) + len(message).to_bytes(4, "big") + message + receiver.encode()
    plain += bytes([32 - len(plain) % 32]) * (32 - len(plain) % 32)
    cipher = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(cipher.update(plain) + cipher.finalize()).decode()


def unseal(encrypted: str, encoding_aes_key: str) -> tuple[bytes, str]:
    """The message and receiver id in ``encrypted``."""
    key = key_of(encoding_aes_key)
    cipher = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = cipher.update(base64.b64decode(encrypted)) + cipher.finalize()
    content = plain[16 : -plain[-1]]
    length = int.from_bytes(content[:4], "big")
    return content[4 : 4 + length], content[4 + length :].decode()


def cdata(text: str) -> str:
    """``text`` as XML character data (a ``]]>`` inside is split across two sections)."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
