"""Hook implementations of the ``hermes-import-codex`` plugin (kept cheap to import)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Importer, SessionSource, SourceInfo, hookimpl

CODEX_SOURCE = SourceInfo(name="codex-cli", label="Codex CLI", short_label="codex")


@hookimpl
def hermes_register_sources(register: Callable[[SessionSource], None]) -> None:
    """Declare the ``codex-cli`` origin of imported Codex CLI sessions."""
    register(CODEX_SOURCE)


@hookimpl
def hermes_register_importers(register: Callable[[Importer], None]) -> None:
    """Declare the ``codex`` importer."""
    from .importer import CodexImporter

    register(CodexImporter())
