"""How failures reach the editor: one JSON-RPC error with one clear line, never a traceback.

Expected failures (no model configured, an unknown session, a store that cannot be written, a
model that refused) become :class:`acp.RequestError` with the message a person can act on. A
bug becomes one line on stderr and an internal error; ``HERMES_DEBUG=1`` logs its traceback.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from acp import RequestError
from hermes_hookspecs import UserFacingError

from hermes_core.store.errors import SessionNotFound, StoreError

P = ParamSpec("P")
R = TypeVar("R")

log = logging.getLogger("hermes.acp")

NOT_FOUND = -32002
"""ACP's code for a resource (here: a session) that does not exist."""
INVALID_PARAMS = -32602
FAILED = -32603
"""JSON-RPC's internal-error code, used for every failure that is not a bad request."""


def unknown_session(session_id: str) -> RequestError:
    """The error for a session id that neither this connection nor the store knows."""
    return RequestError(NOT_FOUND, f"no session {session_id}", {"sessionId": session_id})


def invalid(message: str) -> RequestError:
    """A request the agent cannot act on as given."""
    return RequestError(INVALID_PARAMS, message)


def failed(message: str) -> RequestError:
    """A failure the person can act on (the model, its configuration, the store)."""
    return RequestError(FAILED, message)


def translate(error: Exception) -> RequestError:
    """The JSON-RPC error for ``error``."""
    if isinstance(error, RequestError):
        return error
    if isinstance(error, SessionNotFound):
        return RequestError(NOT_FOUND, str(error))
    if isinstance(error, (UserFacingError, StoreError)):
        return failed(str(error))
    if os.environ.get("HERMES_DEBUG"):
        log.exception("hermes acp: unexpected error")
    else:
        log.error("hermes acp: unexpected error: %s: %s", type(error).__name__, error)
    return failed(f"internal error: {type(error).__name__}: {error}")


def answers(
    method: Callable[P, Awaitable[R]],
) -> Callable[P, Awaitable[R]]:
    """Wrap an ACP method so every exception leaves it as a one-line :class:`RequestError`."""

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except Exception as error:
            raise translate(error) from None

    return wrapper
