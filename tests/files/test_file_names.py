"""File names made from stored text stay plain, distinct and inside their folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_ids import HOSTILE_IDS
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.files import OutputError, path_inside, safe_file_stem


def test_a_standard_session_id_is_its_own_file_stem() -> None:
    assert safe_file_stem("20260301_101010_abcdef") == "20260301_101010_abcdef"


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_a_hostile_id_becomes_a_plain_stem_inside_the_folder(tmp_path: Path, hostile: str) -> None:
    stem = safe_file_stem(hostile)
    assert stem and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in stem)
    assert path_inside(tmp_path, stem + ".json").parent == tmp_path


@given(st.text(), st.text())
def test_two_different_texts_never_share_a_stem(one: str, other: str) -> None:
    if one != other:
        assert safe_file_stem(one) != safe_file_stem(other)


@pytest.mark.parametrize(
    "name", ["", "..", "../x.json", "a/../../b", "/etc/passwd", "a\x00b", "a\\b", "a//b", "./x"]
)
def test_a_name_that_would_leave_its_folder_is_refused_in_one_line(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(OutputError) as refused:
        path_inside(tmp_path, name)
    assert "\n" not in str(refused.value) and str(tmp_path) in str(refused.value)


def test_a_name_may_go_down_into_a_subfolder(tmp_path: Path) -> None:
    assert path_inside(tmp_path, "a/b.jsonl") == tmp_path / "a" / "b.jsonl"
