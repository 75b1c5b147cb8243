"""The plugin contract of Hermes sessions.

A plugin depends on this package alone: it holds the pluggy markers, the hook
specifications, the data types that cross the boundary and the component protocols.

A minimal plugin module::

    from hermes_hookspecs import SourceInfo, hookimpl

    @hookimpl
    def hermes_register_sources(register):
        register(SourceInfo(name="irc", label="IRC", short_label="irc"))

registered through an entry point in the ``hermes`` group::

    [project.entry-points.hermes]
    irc = "my_irc_plugin"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._gateway import (
    SESSION_KEY_NAMESPACE,
    Attachment,
    ChatType,
    Deliver,
    Delivery,
    DeliveryRefused,
    GatewayReply,
    PlatformEvent,
    build_session_key,
)
from ._http_intake import (
    BODY_TIMEOUT_SECONDS,
    RETRY_AFTER_SECONDS,
    SHUTDOWN_GRACE_SECONDS,
    BodyRefused,
    read_body,
)
from ._protocols import (
    Exporter,
    ExportSink,
    Importer,
    ModelProvider,
    PlatformAdapter,
    ReceivingAdapter,
    SessionSource,
    StoreBackend,
    StoreEvents,
)
from ._types import (
    END_REASONS,
    ExportedFile,
    ExportOptions,
    ExportResult,
    ImportCandidate,
    ImportedRoute,
    ImportedSession,
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ParentKind,
    ReasoningDelta,
    RedactionRule,
    Role,
    Session,
    SessionRecord,
    SourceInfo,
    TextDelta,
    TokenUsage,
    ToolCall,
    UnreadableRecords,
    UserFacingError,
)

if TYPE_CHECKING:
    import pluggy

    from . import _hookspecs as hookspecs
    from ._markers import PROJECT_NAME

    hookimpl: pluggy.HookimplMarker
    hookspec: pluggy.HookspecMarker

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The markers and hookspecs import pluggy; data types alone do not need it, and the
    # command line's start-up time is a budget. They load on first access.
    if name in {"hookimpl", "hookspec", "PROJECT_NAME"}:
        from . import _markers

        return getattr(_markers, name)
    if name == "hookspecs":
        from . import _hookspecs

        return _hookspecs
    raise AttributeError(f"module 'hermes_hookspecs' has no attribute {name!r}")


__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "END_REASONS",
    "PROJECT_NAME",
    "RETRY_AFTER_SECONDS",
    "SESSION_KEY_NAMESPACE",
    "SHUTDOWN_GRACE_SECONDS",
    "Attachment",
    "BodyRefused",
    "ChatType",
    "Deliver",
    "Delivery",
    "DeliveryRefused",
    "ExportOptions",
    "ExportResult",
    "ExportSink",
    "ExportedFile",
    "Exporter",
    "GatewayReply",
    "ImportCandidate",
    "ImportedRoute",
    "ImportedSession",
    "Importer",
    "Message",
    "ModelError",
    "ModelEvent",
    "ModelProvider",
    "ModelRequest",
    "ModelSettings",
    "ParentKind",
    "PlatformAdapter",
    "PlatformEvent",
    "ReasoningDelta",
    "ReceivingAdapter",
    "RedactionRule",
    "Role",
    "Session",
    "SessionRecord",
    "SessionSource",
    "SourceInfo",
    "StoreBackend",
    "StoreEvents",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "UnreadableRecords",
    "UserFacingError",
    "__version__",
    "build_session_key",
    "hookimpl",
    "hookspec",
    "hookspecs",
    "read_body",
]
