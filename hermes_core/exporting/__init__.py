"""The export engine behind ``hermes sessions export`` (SPEC X1–X6, K1; DESIGN §2, §4).

The core selects the sessions (through the shared filter module), loads them one at a time,
redacts them when asked, and hands an iterator of ``SessionRecord`` to the exporter plugin of
the chosen format; exporters write through a :class:`FileSink` (atomic files created 0600, or
stdout). Multi-file exports get a ``manifest.jsonl``; ``--delete-after-verified`` deletes a
session only once each of its files is re-read and re-hashed.
"""

from __future__ import annotations

from hermes_core.files import AtomicFile

from .engine import (
    ExportPlan,
    ExportReport,
    PreviewItem,
    VerifiedExport,
    delete_after_verified,
    export_each,
    plan_export,
    preview,
    run_export,
    verify_export,
)
from .errors import ExportError
from .formats import KNOWN_DISTRIBUTIONS, ExporterTraits, find_exporter
from .manifest import MANIFEST_NAME, read_manifest
from .request import ExportRequest
from .sink import FileSink

__all__ = [
    "KNOWN_DISTRIBUTIONS",
    "MANIFEST_NAME",
    "AtomicFile",
    "ExportError",
    "ExportPlan",
    "ExportReport",
    "ExportRequest",
    "ExporterTraits",
    "FileSink",
    "PreviewItem",
    "VerifiedExport",
    "delete_after_verified",
    "export_each",
    "find_exporter",
    "plan_export",
    "preview",
    "read_manifest",
    "run_export",
    "verify_export",
]
