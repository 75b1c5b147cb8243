"""The trace's records use only fields real Claude Code transcripts use (../shared/fixtures)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hermes_export_trace import TraceExporter
from html_trace_samples import DirectorySink, coding_session, options
from trace_checks import parse_trace

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "claude"


def _real_fields() -> dict[str, set[str]]:
    """Field names seen in real transcripts, keyed by record / message / block kind."""
    fields: dict[str, set[str]] = defaultdict(set)
    for path in FIXTURES.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                continue
            kind = record["type"]
            fields[f"record:{kind}"].update(record)
            message = record.get("message")
            if isinstance(message, dict):
                fields[f"message:{kind}"].update(message)
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and isinstance(block.get("type"), str):
                        fields[f"block:{block['type']}"].update(block)
    return fields


def _our_fields(records: list[dict[str, Any]]) -> dict[str, set[str]]:
    fields: dict[str, set[str]] = defaultdict(set)
    for record in records:
        kind = record["type"]
        fields[f"record:{kind}"].update(record)
        if "message" in record:
            fields[f"message:{kind}"].update(record["message"])
            content = record["message"]["content"]
            for block in content if isinstance(content, list) else []:
                fields[f"block:{block['type']}"].update(block)
    return fields


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"real Claude Code logs absent ({FIXTURES})")
def test_every_trace_field_appears_in_real_claude_code_logs(tmp_path: Path) -> None:
    result = TraceExporter().export(iter([coding_session()]), DirectorySink(tmp_path), options())
    ours = _our_fields(parse_trace((tmp_path / result.files[0].path).read_bytes()))
    real = _real_fields()
    assert ours.keys() <= real.keys()
    for kind, names in ours.items():
        assert names <= real[kind], f"{kind}: {sorted(names - real[kind])} not in real logs"
