"""The export engine: check a request, stream the selected sessions to an exporter, record
what was written.

:func:`plan_export` checks everything that can be checked before writing (format installed,
options the format takes, selection, layout) and raises :class:`ExportError` otherwise.
:func:`run_export` hands the exporter an iterator that loads (and, when asked, redacts) one
record at a time, then writes the manifest of a multi-file export. ``--delete-after-verified``
goes through :func:`delete_after_verified` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hermes_hookspecs import (
    ExportedFile,
    Exporter,
    ExportOptions,
    Session,
    SessionRecord,
    UserFacingError,
)

from hermes_core.files import OutputError
from hermes_core.plugins import PluginHost
from hermes_core.selection.options import filter_from_options
from hermes_core.store.errors import SessionNotFound
from hermes_core.store.protocol import Store

from .deletion import delete_exported, delete_targets
from .errors import ExportError
from .formats import ExporterTraits, find_exporter
from .layout import ExportLayout, choose_layout
from .manifest import write_manifest
from .records import load_lineage_record, load_record
from .redacting import RecordRedactor, record_redactor
from .request import ExportRequest
from .targets import ExportTargets, resolve_targets
from .verification import verify_coverage, verify_files


@dataclass(frozen=True, slots=True)
class ExportPlan:
    """A checked export, ready to run (or to preview with ``--dry-run``)."""

    request: ExportRequest
    exporter: Exporter
    traits: ExporterTraits
    targets: ExportTargets
    layout: ExportLayout
    options: ExportOptions

    @property
    def redact(self) -> bool:
        """Whether every record is redacted before the exporter sees it."""
        return self.options.redacted


@dataclass(slots=True)
class ExportReport:
    """What an export wrote (and, with ``--delete-after-verified``, deleted)."""

    layout: ExportLayout
    files: list[ExportedFile] = field(default_factory=list)
    """Every file written, as the exporter reported it (a path relative to the destination
    folder, or absolute); :meth:`absolute` resolves one."""
    sessions_written: int = 0
    sessions_vanished: int = 0
    """Selected sessions another process deleted before they were read (a prune, a delete
    running beside the export): left out, not an error."""
    manifest: Path | None = None
    deleted: list[str] = field(default_factory=list)

    def absolute(self, exported: ExportedFile) -> ExportedFile:
        """``exported`` with its path made absolute against this export's destination."""
        return _absolute(self.layout, exported)


@dataclass(frozen=True, slots=True)
class PreviewItem:
    """One record a dry run would export: its first session and the lineage it spans."""

    session: Session
    lineage: tuple[str, ...]


def _check_options(
    request: ExportRequest, exporter: Exporter, traits: ExporterTraits, host: PluginHost
) -> None:
    name = request.format
    if request.only is not None and not traits.supports_user_prompts:
        able = sorted(
            other
            for other, candidate in host.exporters().items()
            if ExporterTraits.of(candidate).supports_user_prompts
        )
        where = f" (it works with: {', '.join(able)})" if able else ""
        raise ExportError(f"--only {request.only} does not work with --format {name}{where}")
    if request.public and not request.upload:
        raise ExportError("--public only applies to --upload")
    if request.upload and not traits.supports_upload:
        raise ExportError(f"--format {name} cannot --upload (only formats made for sharing can)")
    if request.delete_after_verified:
        if request.session_reference is None:
            raise ExportError(
                "--delete-after-verified works on one session named with --session-id"
            )
        if request.only is not None:
            raise ExportError(
                "--delete-after-verified needs the whole session exported, not --only prompts"
            )
        if request.lineage != "single":
            raise ExportError(
                "--delete-after-verified exports one session and its delegates; leave out "
                "--lineage logical"
            )
        if request.upload:
            raise ExportError("--delete-after-verified keeps files to verify; leave out --upload")


def plan_export(
    store: Store,
    host: PluginHost,
    request: ExportRequest,
    *,
    home: Path,
    now: float | None = None,
) -> ExportPlan:
    """Check ``request`` and resolve its format, selection and layout; write nothing."""
    exporter = find_exporter(host.exporters(), request.format)
    traits = ExporterTraits.of(exporter)
    _check_options(request, exporter, traits, host)
    bulk = filter_from_options(**request.filter_options, ended_only=True, now=now)
    if request.session_reference is not None and bulk.has_attribute_filters:
        raise ExportError("give --session-id or filters, not both")
    targets = resolve_targets(
        store,
        session_reference=request.session_reference,
        bulk_selection=bulk,
        latest_by_default=traits.exports_latest_by_default,
    )
    if targets.kind == "everything" and traits.one_file_per_session and request.only is None:
        raise ExportError(
            f"a bulk --format {request.format} export needs at least one filter (for example "
            "--older-than 90 or --source telegram): a bare one would write a file for every "
            "session"
        )
    layout = choose_layout(
        request.output,
        home=home,
        traits=traits,
        single_session=targets.single_session,
        user_prompts_only=request.only is not None,
        separate_files=request.delete_after_verified,
        upload=request.upload,
    )
    redact = exporter.redact_by_default if request.redact is None else request.redact
    extra = {"upload": request.upload, "public": request.public} if traits.supports_upload else {}
    options = ExportOptions(
        output=request.output,
        single_session=targets.single_session,
        redacted=bool(redact),
        only=request.only,
        lineage=request.lineage,
        extra=extra,
    )
    return ExportPlan(request, exporter, traits, targets, layout, options)


def preview(plan: ExportPlan, store: Store) -> Iterator[PreviewItem]:
    """What the export would hand the exporter, one item per record, writing nothing."""
    for group in plan.targets.groups(store, plan.request.lineage):
        yield PreviewItem(store.get_session(group[0]), group if len(group) > 1 else ())


def _absolute(layout: ExportLayout, exported: ExportedFile) -> ExportedFile:
    if layout.destination is None or exported.path.is_absolute():
        return exported
    path = layout.destination if layout.mode == "file" else layout.destination / exported.path
    return ExportedFile(path, exported.session_ids, exported.message_count, exported.sha256)


def _export(
    plan: ExportPlan, layout: ExportLayout, records: Iterator[SessionRecord], options: ExportOptions
) -> list[ExportedFile]:
    sink = layout.sink()
    try:
        result = plan.exporter.export(records, sink, options)
    except BrokenPipeError:
        raise  # the reader of stdout went away (``| head``): not an export failure
    except OutputError as error:  # it names the file and what became of it
        before = f" ({sink.files_written} file(s) before it were written)"
        raise ExportError(f"{error}{before if sink.files_written else ''}") from error
    except (OSError, UserFacingError) as error:
        raise ExportError(f"the {plan.request.format} export failed: {error}") from error
    sink.finish()
    if layout.mode == "stdout":
        return []
    return result.files


def _redactor(plan: ExportPlan, host: PluginHost) -> RecordRedactor | None:
    return record_redactor(host) if plan.redact else None


def run_export(
    plan: ExportPlan,
    store: Store,
    host: PluginHost,
    *,
    on_record: Callable[[SessionRecord], None] | None = None,
) -> ExportReport:
    """Stream the selected records to the exporter and write the manifest of a multi-file
    export. ``on_record`` is told about each record as the exporter takes it (progress)."""
    redact = _redactor(plan, host)
    user_prompts_only = plan.request.only == "user-prompts"
    lineage_of: dict[str, tuple[str, ...]] = {}
    report = ExportReport(plan.layout)

    def records() -> Iterator[SessionRecord]:
        for group in plan.targets.groups(store, plan.request.lineage):
            try:
                record = load_lineage_record(store, group, user_prompts_only=user_prompts_only)
            except SessionNotFound:
                report.sessions_vanished += 1  # deleted by another process since selected
                continue
            if len(group) > 1:
                lineage_of[record.session.id] = group
            if redact is not None:
                record = redact(record)
            report.sessions_written += 1
            if on_record is not None:
                on_record(record)
            yield record

    with plan.layout.opened() as layout:
        report.layout = layout
        report.files = _export(plan, layout, records(), plan.options)
        if not layout.temporary:
            report.manifest = _maybe_manifest(plan, layout, report.files, lineage_of)
    return report


def _maybe_manifest(
    plan: ExportPlan,
    layout: ExportLayout,
    files: Sequence[ExportedFile],
    lineage_of: dict[str, tuple[str, ...]],
) -> Path | None:
    separate = plan.traits.one_file_per_session or plan.request.delete_after_verified
    if layout.mode != "directory" or not separate or not files:
        return None
    assert layout.destination is not None
    try:
        return write_manifest(
            layout.destination, files, format_name=plan.request.format, lineage_of=lineage_of
        )
    except OutputError as error:
        raise ExportError(
            f"{error} (the {len(files)} exported file(s) were written; the manifest is as it was)"
        ) from error


@dataclass(slots=True)
class VerifiedExport:
    """Files written and verified for ``--delete-after-verified``, awaiting the delete."""

    session_id: str
    exported_messages: dict[str, int]
    """Each target session → the messages its file holds."""
    report: ExportReport


def export_each(plan: ExportPlan, store: Store, host: PluginHost) -> VerifiedExport:
    """Export the named session and each of its delegates to a file of its own (the first
    step of ``--delete-after-verified``); the files are not verified yet."""
    session_id = plan.targets.session_id
    assert session_id is not None, "plan_export checks --delete-after-verified has --session-id"
    if store.get_session(session_id).is_active:
        raise ExportError(f"session {session_id} is still active; end it before deleting it")
    redact = _redactor(plan, host)
    options = ExportOptions(
        output=plan.options.output,
        single_session=True,
        redacted=plan.options.redacted,
        lineage="single",
        extra=plan.options.extra,
    )
    exported_messages: dict[str, int] = {}
    report = ExportReport(plan.layout)
    for target in delete_targets(store, session_id):
        record = load_record(store, target)
        exported_messages[target] = len(record.messages)
        if redact is not None:
            record = redact(record)
        for exported in _export(plan, plan.layout, iter([record]), options):
            report.files.append(report.absolute(exported))
        report.sessions_written += 1
    report.manifest = _maybe_manifest(plan, plan.layout, report.files, {})
    return VerifiedExport(session_id, exported_messages, report)


def verify_export(verified: VerifiedExport) -> None:
    """Re-read and re-hash every file, and check each session has its own complete file."""
    verify_coverage(verified.report.files, verified.exported_messages)
    verify_files(verified.report.files)


def delete_after_verified(
    plan: ExportPlan,
    store: Store,
    host: PluginHost,
    *,
    confirm: Callable[[VerifiedExport], bool],
) -> ExportReport:
    """Export each target to its own file, verify every file, ask ``confirm``, then delete
    the session and its delegates in one transaction (refused if they changed meanwhile)."""
    verified = export_each(plan, store, host)
    verify_export(verified)
    if confirm(verified):
        verified.report.deleted = delete_exported(
            store, verified.session_id, verified.exported_messages
        )
    return verified.report
