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

from . import _hookspecs as hookspecs
from ._markers import PROJECT_NAME, hookimpl, hookspec
from ._protocols import Exporter, ExportSink, Importer, PlatformAdapter, SessionSource
from ._types import (
    END_REASONS,
    ExportedFile,
    ExportOptions,
    ExportResult,
    ImportCandidate,
    ImportedSession,
    Message,
    ParentKind,
    RedactionRule,
    Role,
    Session,
    SessionRecord,
    SourceInfo,
    ToolCall,
)

__version__ = "0.1.0"

__all__ = [
    "END_REASONS",
    "PROJECT_NAME",
    "ExportOptions",
    "ExportResult",
    "ExportSink",
    "ExportedFile",
    "Exporter",
    "ImportCandidate",
    "ImportedSession",
    "Importer",
    "Message",
    "ParentKind",
    "PlatformAdapter",
    "RedactionRule",
    "Role",
    "Session",
    "SessionRecord",
    "SessionSource",
    "SourceInfo",
    "ToolCall",
    "__version__",
    "hookimpl",
    "hookspec",
    "hookspecs",
]
