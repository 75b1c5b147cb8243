"""Automatic titles (SPEC S5): generated once, after the first exchange, off the caller's thread.

The worker reads and writes through a store of its own (the backend opens it on its own
connection), asks the title hook (first answer wins), and stores the answer only if nobody
has set a title in the meantime. It never raises: a failing generator leaves the session
untitled and is logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_hookspecs import StoreEvents

    from .facade import StoreFacade

log = logging.getLogger(__name__)

MESSAGES_SHOWN = 6
"""How many of the first messages the generator sees."""

WorkerStore = Callable[[], AbstractContextManager["StoreFacade"]]
"""Opens the store the worker uses (its own connection; no events of its own)."""


def _generate(open_store: WorkerStore, session_id: str, events: StoreEvents) -> None:
    from .errors import StoreError

    try:
        with open_store() as store:
            session = store.get_session(session_id)
            if session.title is not None:
                return
            messages = []
            for message in store.iter_messages(session_id, batch=MESSAGES_SHOWN):
                messages.append(message)
                if len(messages) >= MESSAGES_SHOWN:
                    break
            proposal = events.generate_title(session, messages)
            if proposal:
                store.apply_automatic_title(session_id, proposal)
    except StoreError as error:  # the disk, the file or the server: one line
        log.warning("automatic title for %s not stored: %s", session_id, error)
    except Exception:  # a title is a nicety; never let it break anything
        log.warning("automatic title for %s failed", session_id, exc_info=True)


def generate_title_in_background(
    open_store: WorkerStore, session_id: str, events: StoreEvents
) -> threading.Thread:
    """Start the worker thread for ``session_id`` and return it."""
    thread = threading.Thread(
        target=_generate,
        args=(open_store, session_id, events),
        name=f"hermes-title-{session_id}",
        daemon=True,
    )
    thread.start()
    return thread
