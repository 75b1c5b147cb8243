"""Taking platform messages once: what was already taken (or is on its way), and what of a
batch may be confirmed to the platform."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class RecentIds:
    """The ids of the last ``size`` messages taken, and of the ones still in flight (delivered,
    not stored yet). A platform that sends a message again — a retry, an event that arrives
    twice, a poll returning what is not confirmed yet — is told apart by :meth:`begin`."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._taken: OrderedDict[str, None] = OrderedDict()
        self._in_flight: set[str] = set()

    def begin(self, message_id: str) -> bool:
        """True when the message is new: it is now in flight. False when it was taken already
        or is still in flight."""
        if message_id in self._in_flight or message_id in self._taken:
            return False
        self._in_flight.add(message_id)
        return True

    def taken(self, message_id: str) -> None:
        """The message is stored: remember it as taken."""
        self._in_flight.discard(message_id)
        self._taken[message_id] = None
        self._taken.move_to_end(message_id)
        while len(self._taken) > self.size:
            self._taken.popitem(last=False)

    def dropped(self, message_id: str) -> None:
        """The message was not stored: a later copy of it is new again."""
        self._in_flight.discard(message_id)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._in_flight or message_id in self._taken


class StoredPrefix(Generic[K]):
    """A batch in the platform's order, item by item stored or not: the platform may be told
    that everything up to :attr:`confirmable` is done (the unbroken stored prefix) — an item
    stored after one that was not stays unconfirmed and comes again (the gateway recognises
    it). An item refused ``give_up_after`` times in a row is reported by :meth:`refused` so
    the adapter can skip it with one log line instead of stalling on it forever."""

    def __init__(self, give_up_after: int = 3) -> None:
        self.give_up_after = give_up_after
        self._order: OrderedDict[K, bool] = OrderedDict()
        self._refusals: dict[K, int] = {}
        self.confirmable: K | None = None
        """The last item of the unbroken done prefix (None: nothing yet)."""

    def add(self, item: K) -> None:
        """An item of the batch, in the platform's order (not done yet)."""
        if item not in self._order:
            self._order[item] = False

    def done(self, item: K) -> bool:
        """The item is stored (or has nothing to store, or was skipped); True when the
        confirmable prefix moved."""
        if item not in self._order:
            return False
        self._order[item] = True
        self._refusals.pop(item, None)
        moved = False
        while self._order:
            first, finished = next(iter(self._order.items()))
            if not finished:
                break
            self._order.popitem(last=False)
            self.confirmable, moved = first, True
        return moved

    def refused(self, item: K) -> bool:
        """The item was not stored this time; True when it has now been refused
        ``give_up_after`` times (skip it: call :meth:`done`)."""
        count = self._refusals.get(item, 0) + 1
        self._refusals[item] = count
        return count >= self.give_up_after

    def forget_pending(self) -> None:
        """Drop what is not done (it will come again in the next batch)."""
        self._order.clear()

    @property
    def pending(self) -> int:
        """Items added and not done."""
        return sum(1 for finished in self._order.values() if not finished)
