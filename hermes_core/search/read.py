"""Read (``session_id`` alone): a whole session, or its head and tail when it is big.

Sessions of at most :data:`READ_ALL_MESSAGES` messages and :data:`READ_ALL_CHARS` characters
come back whole; bigger ones as the first :data:`HEAD_MESSAGES` and the last
:data:`TAIL_MESSAGES` messages with a hint to scroll through the middle. ``session_id`` may be
an id, a unique prefix, a title, or an ``@session:<profile>/<id>`` link (the tool reads the
store it was given; the profile part is reported back, not switched to).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import messages
from .arguments import SearchArguments

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex

READ_ALL_MESSAGES = 60
READ_ALL_CHARS = 60_000
HEAD_MESSAGES = 10
TAIL_MESSAGES = 10
LINK_PREFIX = "@session:"


def split_link(reference: str) -> tuple[str | None, str]:
    """``@session:<profile>/<id>`` → (profile, id); anything else → (None, reference)."""
    if not reference.startswith(LINK_PREFIX):
        return None, reference
    rest = reference[len(LINK_PREFIX) :]
    profile, slash, session_id = rest.rpartition("/")
    if not slash:
        return None, rest
    return profile or None, session_id


def read(index: SearchIndex, arguments: SearchArguments) -> dict[str, Any]:
    assert arguments.session_id is not None
    profile, reference = split_link(arguments.session_id)
    session_id = index.resolve(reference)
    title, started_at, last_active_at, source, count, chars = index.session_summary(session_id)
    payload: dict[str, Any] = {
        "form": "read",
        "session_id": session_id,
        "title": title,
        "when": messages.iso_time(started_at),
        "last_active": messages.iso_time(last_active_at),
        "source": source,
        "message_count": count,
    }
    if profile is not None:
        payload["profile"] = profile
    if count <= READ_ALL_MESSAGES and chars <= READ_ALL_CHARS:
        payload.update(complete=True, messages=messages.all_messages(index, session_id))
        return payload
    head, tail = messages.head_and_tail(index, session_id, HEAD_MESSAGES, TAIL_MESSAGES)
    omitted = max(0, count - len(head) - len(tail))
    if omitted == 0:  # few but very long messages: everything fits in head and tail
        tail = [m for m in tail if m["id"] not in {h["id"] for h in head}]
    payload.update(
        complete=False,
        messages=head,
        omitted_messages=omitted,
        tail_messages=tail,
        hint=(
            f"{omitted} messages between the head and the tail are not shown: call "
            f"session_search(session_id={session_id!r}, around_message_id=<id>) to scroll, "
            f"e.g. around_message_id={head[-1]['id'] if head else 0} to continue from the head."
        ),
    )
    return payload
