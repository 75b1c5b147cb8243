"""The redaction step of an export (SPEC K1): every string field, before the exporter sees it.

The engine asks :func:`record_redactor` once per export and applies what it returns to each
record as it streams past; the rules are the core's plus those plugins register.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import SessionRecord

from hermes_core.plugins import PluginHost

RecordRedactor = Callable[[SessionRecord], SessionRecord]


def record_redactor(host: PluginHost) -> RecordRedactor:
    """A function giving a redacted copy of a record (every string field scrubbed)."""
    from hermes_core.redaction import Redactor

    redactor = Redactor.from_host(host)

    def redact(record: SessionRecord) -> SessionRecord:
        redacted: SessionRecord = redactor.redact_record(record)
        # Ids are not secrets; keep the lineage however the redactor rebuilds the record.
        redacted.lineage = record.lineage
        redacted.children = record.children
        return redacted

    return redact
