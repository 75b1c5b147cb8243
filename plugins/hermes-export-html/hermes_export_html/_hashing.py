"""A write-through wrapper that hashes and counts every byte an export writes."""

from __future__ import annotations

import hashlib
from typing import BinaryIO


class HashingWriter:
    """Writes UTF-8 text to a binary file while keeping its SHA-256 (for the manifest)."""

    def __init__(self, target: BinaryIO) -> None:
        self._target = target
        self._digest = hashlib.sha256()

    def write(self, text: str) -> None:
        """Encode ``text`` and write it; lone surrogates become ``\\udcxx`` text, never an error."""
        data = text.encode("utf-8", errors="backslashreplace")
        self._digest.update(data)
        self._target.write(data)

    @property
    def sha256(self) -> str:
        """The hex digest of everything written so far."""
        return self._digest.hexdigest()
