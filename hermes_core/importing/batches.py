"""Cutting a stream of messages into batches small enough to hold and to commit at once."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_hookspecs import Message

BATCH_MESSAGES = 500
BATCH_CHARACTERS = 4_000_000
"""A batch ends at whichever limit comes first, so a log of huge messages stays bounded."""


def message_batches(
    messages: Iterator[Message],
    *,
    first_timestamp: float,
    size: int = BATCH_MESSAGES,
    characters: int = BATCH_CHARACTERS,
) -> Iterator[list[Message]]:
    """Batches of ``messages`` in order. A message without a timestamp takes its
    predecessor's (the first one ``first_timestamp``), so order and time agree."""
    batch: list[Message] = []
    held = 0
    previous = first_timestamp
    for message in messages:
        if message.timestamp is None:
            message.timestamp = previous
        previous = message.timestamp
        batch.append(message)
        held += len(message.content)
        if len(batch) >= size or held >= characters:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch
