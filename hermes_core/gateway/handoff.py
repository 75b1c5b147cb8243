"""The gateway's side of ``/handoff <platform>`` (SPEC G7): a watcher that claims pending
handoffs for the platforms this gateway runs and moves the session there.

For each claimed handoff, on the watcher's own thread (adapters' ``send``/``create_thread``
block and must not run on the event loop): open a thread titled like the session in the
platform's home channel (a failure or None: the home channel itself), run a synthetic user turn
asking the agent to confirm the handoff and summarise, send the answer, and only then point the
destination key (computed with the G1 rules: a thread is keyed without a user id; the home
channel by the person who sent ``/sethome``) at the SAME session id. A send that fails marks the
handoff failed with the reason and leaves the destination key untouched; otherwise it is
completed. The session keeps its source (``cli``); its
routing identity (key, chat, thread) is stamped on it in the routing transaction. Any store
backend serves handoffs: the watcher uses the store's ``handoffs`` and ``routing`` facets.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ChatType, build_session_key

from hermes_core.agent import TurnEngine
from hermes_core.store.handoffs import Handoff
from hermes_core.store.routed_sessions import RouteOrigin

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

    from .worker import EventWorker

log = logging.getLogger("hermes.gateway")

POLL_SECONDS = 1.0
HANDOFF_PROMPT = (
    "[Handoff] This conversation has just been handed off from the terminal to {platform}. "
    "Confirm the handoff in one sentence, then summarise the conversation so far in a few "
    "lines so it can go on here."
)


class HandoffWatcher:
    """Polls the handoff registry about once a second while the gateway runs."""

    def __init__(
        self,
        worker: EventWorker,
        adapters: Mapping[str, Any],
        platforms: list[str],
        *,
        interval: float = POLL_SECONDS,
    ) -> None:
        self.worker = worker
        self.adapters = adapters
        self.platforms = platforms
        self.interval = interval
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hermes-handoff")
        self._store: Store | None = None

    async def run(self, stop: asyncio.Event) -> None:
        """Claim and carry out handoffs until ``stop`` is set."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._thread, self._open)
            log.debug("handoff watcher: watching for %s", ", ".join(self.platforms))
            while not stop.is_set():
                try:
                    await loop.run_in_executor(self._thread, self.step)
                except Exception as error:  # one bad handoff must not stop the watcher
                    log.error("handoff watcher: %s", " ".join(str(error).split()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.interval)
        finally:
            await loop.run_in_executor(self._thread, self._close)
            self._thread.shutdown(wait=True)

    def _open(self) -> None:
        self._store = self.worker.open_store()
        reclaimed = self._store.handoffs.reclaim_stale(self.platforms)
        for session_id in reclaimed:
            log.info("handoff of %s was left running by a stopped gateway: retrying", session_id)

    def _close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def step(self) -> Handoff | None:
        """Claim one pending handoff and carry it out (on the watcher thread)."""
        store = self._store
        assert store is not None
        registry = store.handoffs
        handoff = registry.claim(self.platforms)
        if handoff is None:
            return None
        log.info("handoff of %s to %s claimed", handoff.session_id, handoff.platform)
        try:
            self._carry_out(store, handoff)
        except Exception as error:
            reason = " ".join(str(error).split()) or type(error).__name__
            log.warning("handoff of %s to %s failed: %s", handoff.session_id, handoff.platform,
                        reason)  # fmt: skip
            registry.fail(handoff.session_id, reason)
            return handoff
        registry.complete(handoff.session_id)
        log.info("handoff of %s to %s completed", handoff.session_id, handoff.platform)
        return handoff

    def _carry_out(self, store: Store, handoff: Handoff) -> None:
        platform = handoff.platform
        adapter = self.adapters[platform]
        home = store.routing.home(platform)
        if home is None:
            raise RuntimeError(f"{platform} has no home channel: send /sethome in a chat there")
        chat_id, home_thread = home
        session = store.get_session(handoff.session_id)
        title = session.title or session.id
        thread_id: str | None = None
        try:
            thread_id = adapter.create_thread(chat_id, title)
        except Exception as error:
            log.warning("handoff: no thread in %s (%s); using the home channel", chat_id, error)
        rules = self.worker.rules
        if thread_id is not None:
            chat_type: ChatType = "thread"
            user_id: str | None = None
        else:
            thread_id = home_thread
            kind, user_id = store.handoffs.home_participant(platform)
            chat_type = kind if kind in ("dm", "group", "channel", "thread") else "group"  # type: ignore[assignment]
        key = build_session_key(
            platform,
            chat_type,
            chat_id,
            user_id,
            thread_id,
            group_sessions_per_user=rules.group_sessions_per_user,
            thread_sessions_per_user=rules.thread_sessions_per_user,
        )
        origin = RouteOrigin(
            platform=platform,
            chat_id=chat_id,
            chat_type=chat_type,
            user_id=user_id,
            thread_id=thread_id,
        )
        engine = TurnEngine(store, self.worker.provider, self.worker.settings)
        # Sent whole: the model is asked for it in one piece.
        result = engine.run_turn(session.id, HANDOFF_PROMPT.format(platform=platform), stream=False)
        if result.error:
            raise RuntimeError(f"the model could not answer: {result.error}")
        adapter.send(chat_id, result.text, thread_id)
        # Only a handoff that reached the platform takes the chat over: a failed send leaves
        # the destination key (the home chat's own conversation) where it was.
        # result.session_id: the turn may have continued in a compression child.
        store.routing.point(key, result.session_id, origin)
