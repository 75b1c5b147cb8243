"""``trace`` uploads, against a LOCAL STAND-IN of the Hugging Face Hub (see ``hub_standin``).

The real huggingface_hub client talks HTTP to the stand-in through ``HF_ENDPOINT``; nothing
here reaches huggingface.co.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_export_trace import TraceExporter, TraceUploadError
from hermes_export_trace.upload import INSTALL_HINT
from hermes_hookspecs import ExportResult, UserFacingError
from html_trace_samples import DirectorySink, chat_session, coding_session, options
from hub_standin import StandInHub, StandInRepo
from trace_checks import assert_claude_trace_shape, parse_trace


@pytest.fixture
def standin_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInHub]:
    with StandInHub(token="hf_standin_token", user="ana") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        monkeypatch.setenv("HF_TOKEN", "hf_standin_token")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        yield hub


def upload(tmp_path: Path, **extra: object) -> ExportResult:
    records = [coding_session(), chat_session()]
    return TraceExporter().export(iter(records), DirectorySink(tmp_path), options(**extra))


def dataset(hub: StandInHub) -> StandInRepo:
    return hub.state.repos["ana/hermes-traces"]


def test_standin_hub_upload_creates_a_private_dataset_with_the_traces(
    standin_hub: StandInHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = upload(tmp_path, upload=True)
    repo = dataset(standin_hub)
    assert repo.repo_type == "dataset"
    assert repo.private is True
    assert sorted(repo.files) == ["20260101_090000_a1b2c3.trace.jsonl", "a1b2c3d4.trace.jsonl"]
    for written in result.files:
        uploaded = repo.files[written.path.name]
        assert uploaded == (tmp_path / written.path).read_bytes()
        assert_claude_trace_shape(parse_trace(uploaded), written.session_ids[0])
    assert "uploaded 2 trace(s)" in capsys.readouterr().err
    assert ("GET", "/api/whoami-v2") in standin_hub.state.requests


def test_standin_hub_public_only_when_asked(standin_hub: StandInHub, tmp_path: Path) -> None:
    upload(tmp_path, upload=True, public=True)
    assert dataset(standin_hub).private is False


def test_standin_hub_existing_public_dataset_needs_public(
    standin_hub: StandInHub, tmp_path: Path
) -> None:
    standin_hub.state.repos["ana/hermes-traces"] = StandInRepo(
        "ana/hermes-traces", "dataset", private=False
    )
    with pytest.raises(TraceUploadError, match="is public; pass --public") as raised:
        upload(tmp_path, upload=True)
    assert "\n" not in str(raised.value)
    assert dataset(standin_hub).files == {}
    # The local files were still written before the upload was refused.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "20260101_090000_a1b2c3.trace.jsonl",
        "a1b2c3d4.trace.jsonl",
    ]


def test_standin_hub_reupload_to_an_existing_private_dataset(
    standin_hub: StandInHub, tmp_path: Path
) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    upload(tmp_path / "one", upload=True)
    upload(tmp_path / "two", upload=True)
    repo = dataset(standin_hub)
    assert repo.private is True
    assert len(repo.files) == 2


def test_no_upload_without_the_option(standin_hub: StandInHub, tmp_path: Path) -> None:
    upload(tmp_path)
    assert standin_hub.state.requests == []


def test_upload_without_token_is_one_clear_line(
    standin_hub: StandInHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(TraceUploadError) as raised:
        upload(tmp_path, upload=True)
    message = str(raised.value)
    assert "HF_TOKEN" in message and "\n" not in message
    # The contract's exception the core shows as one line.
    assert isinstance(raised.value, UserFacingError)
    assert standin_hub.state.requests == []
    assert list(tmp_path.iterdir()) == [], "nothing is written when the upload cannot happen"


def test_standin_hub_rejected_token_is_one_clear_line(
    standin_hub: StandInHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(TraceUploadError) as raised:
        upload(tmp_path, upload=True)
    message = str(raised.value)
    assert message.startswith("Hugging Face did not accept HF_TOKEN")
    assert "\n" not in message
    assert "ana/hermes-traces" not in standin_hub.state.repos


def test_missing_huggingface_hub_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_any")
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(TraceUploadError) as raised:
        upload(tmp_path, upload=True)
    assert INSTALL_HINT in str(raised.value)
    assert list(tmp_path.iterdir()) == []
    assert INSTALL_HINT == "pip install 'hermes-export-trace[upload]'"
