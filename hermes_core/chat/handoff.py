"""``/handoff <platform>`` (SPEC G7): move the current chat session to a messaging platform.

The CLI checks the platform is enabled in ``gateway.platforms`` and has a home channel
(``/sethome``), gives the session a title when it has none (``<platform> handoff YYYY-MM-DD
HH:MM``, so it can be resumed by name), marks the handoff pending in the registry and waits:
``gateway.handoff_timeout_seconds`` (default 60) for a running gateway to claim it (else the
request is withdrawn and the chat goes on here), then for the gateway to finish. A slash
command only runs between turns, so a handoff never starts while an answer is streaming.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .conversation import ChatError
from .output import notice_line

if TYPE_CHECKING:
    from hermes_core.store.handoffs import Handoff
    from hermes_core.store.protocol import HandoffTable

    from .commands import SlashContext

TIMEOUT_KEY = "gateway.handoff_timeout_seconds"
POLL_SECONDS = 0.25


def hand_off(context: SlashContext, argument: str) -> bool:
    """Run ``/handoff``; True (the chat ends) once the gateway has taken the session over."""
    from hermes_core.gateway.service import enabled_platforms

    platform = argument.strip().lower()
    config = context.config
    if config is None or not context.recorded:
        raise ChatError("/handoff needs the session store, which is unavailable")
    enabled = enabled_platforms(config)
    if not platform:
        known = ", ".join(sorted(enabled)) or "none enabled"
        raise ChatError(f"usage: /handoff PLATFORM (enabled: {known})")
    if platform not in enabled:
        raise ChatError(
            f"{platform} is not enabled: add it under gateway.platforms in config.yaml, "
            f"run `hermes gateway run`, then send /sethome in the chat that should receive it"
        )
    conversation = context.conversation
    store = conversation.store
    if not conversation.started:
        raise ChatError("nothing to hand off yet: send a message first")
    if store.routing.home(platform) is None:
        raise ChatError(
            f"{platform} has no home channel: send /sethome in the {platform} chat that should "
            "receive handoffs, then try again"
        )
    title = conversation.title() or conversation.set_title(
        f"{platform} handoff {time.strftime('%Y-%m-%d %H:%M')}"
    )
    registry = store.handoffs
    if not registry.request(conversation.session_id, platform):
        raise ChatError("a handoff of this session is already under way")
    timeout = float(config[TIMEOUT_KEY])
    outcome = _wait(context, registry, conversation.session_id, platform, timeout)
    if outcome.state == "failed":
        raise ChatError(f"the handoff to {platform} failed: {outcome.error}")
    conversation.handed_off = True
    notice_line(
        context.console,
        f"↻ Handoff complete. The session is now active on {platform}.",
        "ansigreen",
    )
    notice_line(context.console, f"Resume it on this CLI later with: /resume {title}", "")
    return True


def _wait(
    context: SlashContext,
    registry: HandoffTable,
    session_id: str,
    platform: str,
    timeout: float,
) -> Handoff:
    from rich.text import Text  # plain text, never read as markup

    deadline = time.monotonic() + timeout
    status = context.console.rich.status(
        Text(f"Handing off to {platform}: waiting for the gateway…")
    )
    try:
        with status:
            while True:
                current = registry.get(session_id)
                if current is None:
                    raise ChatError("the handoff request disappeared; try again")
                if current.state in ("completed", "failed"):
                    return current
                if current.state == "running":
                    status.update(Text(f"Handing off to {platform}: the gateway is taking over…"))
                elif time.monotonic() >= deadline and registry.cancel(session_id):
                    raise ChatError(
                        f"no gateway took the handoff within {timeout:g} s (is `hermes gateway "
                        f"run` running with {platform}?); the session stays here"
                    )
                time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        registry.cancel(session_id)  # only while nobody claimed it
        raise
