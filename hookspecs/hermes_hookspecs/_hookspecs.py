"""The hooks of the ``hermes`` project: the whole plugin contract.

Every hook is documented in ``docs/plugin-hooks.md`` with this exact signature; a test fails
when they drift apart. Registration hooks receive a ``register`` callback: call it once per
component. pluggy passes only the arguments an implementation names, so a hook can gain
arguments without breaking existing plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._markers import hookspec
from ._protocols import (
    Exporter,
    Importer,
    ModelProvider,
    PlatformAdapter,
    SessionSource,
    StoreBackend,
)
from ._types import Message, RedactionRule, Session


@hookspec
def hermes_register_sources(register: Callable[[SessionSource], None]) -> None:
    """Declare session origins (SPEC O1).

    Call ``register(SourceInfo(name=..., label=..., short_label=...))`` for each origin this
    plugin brings. Two plugins declaring the same name is an error naming both.
    """


@hookspec
def hermes_register_exporters(register: Callable[[Exporter], None]) -> None:
    """Declare export formats; ``register(exporter)`` once per format name."""


@hookspec
def hermes_register_importers(register: Callable[[Importer], None]) -> None:
    """Declare readers of other tools' session logs; ``register(importer)`` once each."""


@hookspec
def hermes_register_platforms(register: Callable[[PlatformAdapter], None]) -> None:
    """Declare messaging-platform adapters; each is also a session source."""


@hookspec
def hermes_register_model_providers(register: Callable[[ModelProvider], None]) -> None:
    """Declare ways to call a language model; ``register(provider)`` once per provider name.

    ``model.provider`` in ``config.yaml`` picks one by name for chat, the gateway and model
    titles. Two plugins registering the same name is an error naming both.
    """


@hookspec
def hermes_register_store_backends(register: Callable[[StoreBackend], None]) -> None:
    """Declare databases the session store can live in; ``register(backend)`` once per scheme.

    ``store.url`` in ``config.yaml`` (or ``HERMES_STORE_URL``) picks one by its scheme:
    ``sqlite:///path`` is built in; ``postgresql://…`` comes from ``hermes-store-postgres``.
    Two plugins registering the same scheme is an error naming both.
    """


@hookspec
def hermes_register_commands(app: Any) -> None:
    """Add sub-commands to the ``hermes`` command line.

    ``app`` is the root ``typer.Typer``; add commands or groups to it (they are listed under
    the "Plugins" help panel). Import heavy modules inside the command, not at module level:
    the command line starts on every shell-completion keystroke.
    """


@hookspec
def hermes_register_redaction_rules(register: Callable[[RedactionRule], None]) -> None:
    """Add secret patterns (private token formats) to the redaction engine."""


@hookspec(firstresult=True)
def hermes_generate_title(session: Session, messages: Sequence[Message]) -> str | None:
    """Propose an automatic title for ``session`` after its first exchange (SPEC S5).

    Called once per session, in a background thread, only when nobody has set a title.
    Return a short descriptive title (3-7 words), or None to let the next plugin try; the
    first non-None answer wins. The core cuts it to 100 characters and makes it unique.
    """


@hookspec
def hermes_session_started(session: Session) -> None:
    """A session row was created (any origin). Must return quickly; never raise."""


@hookspec
def hermes_session_ended(session: Session, reason: str) -> None:
    """A session ended with ``reason`` (see ``END_REASONS``). Must return quickly."""


@hookspec
def hermes_session_before_reset(session: Session, messages: Sequence[Message]) -> None:
    """A session is about to be reset automatically: the last chance to save memories."""
