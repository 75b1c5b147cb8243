"""Finding the exporter a user asked for and reading the optional traits it declares.

The ``Exporter`` protocol requires ``name``, ``extension``, ``description`` and
``redact_by_default``. An exporter may also declare, as plain attributes, how the core should
lay out and drive its export; each has a safe default when absent:

``one_file_per_session`` (False)
    Writes one file per session (``md``, ``qmd``, ``trace``), so OUTPUT is a directory (default
    ``$HERMES_HOME/session-exports``) and a ``manifest.jsonl`` is written next to the files.
``stdout_for_single_session`` (False)
    With one session and no OUTPUT, writes to stdout (``trace``).
``exports_latest_by_default`` (False)
    With neither ``--session-id`` nor a filter, exports the most recently active session
    instead of every session (``trace``).
``supports_user_prompts`` (False)
    Takes ``--only user-prompts`` (``jsonl``, ``md``).
``supports_upload`` (False)
    Takes ``--upload``/``--public``, passed as ``options.extra["upload"]``/``["public"]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_hookspecs import Exporter

from .errors import ExportError

KNOWN_DISTRIBUTIONS = {
    "jsonl": "hermes-export-jsonl",
    "md": "hermes-export-markdown",
    "qmd": "hermes-export-markdown",
    "html": "hermes-export-html",
    "trace": "hermes-export-trace",
}
"""Where the formats this project publishes can be installed from."""


@dataclass(frozen=True, slots=True)
class ExporterTraits:
    """The optional traits of one exporter, with their defaults filled in."""

    one_file_per_session: bool
    stdout_for_single_session: bool
    exports_latest_by_default: bool
    supports_user_prompts: bool
    supports_upload: bool

    @classmethod
    def of(cls, exporter: Exporter) -> ExporterTraits:
        """Read the traits ``exporter`` declares (any truthy value counts as set)."""
        return cls(
            one_file_per_session=bool(getattr(exporter, "one_file_per_session", False)),
            stdout_for_single_session=bool(getattr(exporter, "stdout_for_single_session", False)),
            exports_latest_by_default=bool(getattr(exporter, "exports_latest_by_default", False)),
            supports_user_prompts=bool(getattr(exporter, "supports_user_prompts", False)),
            supports_upload=bool(getattr(exporter, "supports_upload", False)),
        )


def find_exporter(installed: dict[str, Exporter], name: str) -> Exporter:
    """The exporter registered as ``name``.

    A missing one is an :class:`ExportError` naming the distribution to install (for the
    formats this project publishes) and listing the installed formats.
    """
    if name in installed:
        return installed[name]
    available = ", ".join(sorted(installed)) or "none"
    hint = KNOWN_DISTRIBUTIONS.get(name)
    install = f" (pip install {hint})" if hint else ""
    raise ExportError(f"no exporter '{name}' is installed{install}; installed formats: {available}")
