"""Entry point of ``hermes-import-hermes-agent``: registers the ``hermes-agent`` importer.
Light on purpose: the reader loads when an import runs.

No session source is registered: a Hermes Agent session keeps the origin it had there
(``cli``, ``telegram``…), the same origins Hermes sessions knows.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Importer, hookimpl


@hookimpl
def hermes_register_importers(register: Callable[[Importer], None]) -> None:
    """Register the ``hermes-agent`` importer (a Hermes Agent ``state.db``)."""
    from .importer import HermesAgentImporter

    register(HermesAgentImporter())
