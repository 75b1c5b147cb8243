"""An event as the gateway inbox keeps it: :class:`PlatformEvent` to JSON text and back.

The inbox (``hermes_core.store.inbox``) records every incoming event before its chat's turn,
so a restart can answer what a killed gateway had acknowledged and not turned yet. Only the
event's fields are kept (text, attachments' descriptions and paths, never their bytes).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hermes_hookspecs import Attachment, PlatformEvent

_FIELDS = frozenset(field.name for field in dataclasses.fields(PlatformEvent))
_ATTACHMENT_FIELDS = frozenset(field.name for field in dataclasses.fields(Attachment))


_FIELD_ORDER = tuple(field.name for field in dataclasses.fields(PlatformEvent))
_ATTACHMENT_ORDER = tuple(field.name for field in dataclasses.fields(Attachment))


def event_json(event: PlatformEvent) -> str:
    """The event as JSON text (field by field: ``dataclasses.asdict`` deep-copies every value
    first, and this runs for every incoming event)."""
    data: dict[str, Any] = {name: getattr(event, name) for name in _FIELD_ORDER}
    data["attachments"] = [
        {name: getattr(attachment, name) for name in _ATTACHMENT_ORDER}
        for attachment in event.attachments
    ]
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def event_from_json(text: str) -> PlatformEvent:
    """The event :func:`event_json` wrote (fields a later version added are ignored)."""
    data: dict[str, Any] = {k: v for k, v in json.loads(text).items() if k in _FIELDS}
    attachments = tuple(
        Attachment(**{k: v for k, v in item.items() if k in _ATTACHMENT_FIELDS})
        for item in data.pop("attachments", None) or ()
    )
    return PlatformEvent(**data, attachments=attachments)
