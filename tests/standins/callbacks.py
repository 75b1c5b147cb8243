"""What the stand-ins of webhook platforms do the same way when they play the platform calling
an adapter (a real HTTP request on 127.0.0.1, its answer kept whatever it is) and when a test
waits for what the adapter sent back. Not a stand-in itself: the pieces they share."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class CallbackAnswer:
    """How the adapter answered one callback (status 0: no answer in time, or not reachable)."""

    status: int
    body: str


def call_back(request: urllib.request.Request, timeout: float) -> CallbackAnswer:
    """Send ``request`` to the adapter and keep its answer: any HTTP status with its body, or
    status 0 with the reason when it did not answer within ``timeout`` or could not be reached."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return CallbackAnswer(response.status, response.read().decode())
    except urllib.error.HTTPError as error:
        return CallbackAnswer(error.code, error.read().decode())
    except (urllib.error.URLError, TimeoutError) as error:
        return CallbackAnswer(0, str(getattr(error, "reason", error)))


def wait_for_count(
    condition: threading.Condition, items: list[T], count: int, timeout: float
) -> list[T]:
    """Block until ``items`` (appended under ``condition``, which is notified) holds ``count``;
    a copy of all it holds. An AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    with condition:
        while len(items) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{len(items)} so far, not {count}: {items!r}"[:2000])
            condition.wait(left)
        return list(items)
