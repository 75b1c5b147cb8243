"""Time values of the session filters: durations, bare days and ISO dates (SPEC F1)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.selection.timespec import DURATION_UNITS, FilterError, parse_time_value

NOW = 1_780_000_000.0
DAY = 86400.0


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run the test with the process's local time zone set to New York."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("value", "seconds_back"),
    [
        ("90s", 90),
        ("30m", 30 * 60),
        ("5h", 5 * 3600),
        ("2d", 2 * DAY),
        ("1w", 7 * DAY),
        ("1.5h", 1.5 * 3600),
        ("5H", 5 * 3600),
        ("2D", 2 * DAY),
        ("5 h", 5 * 3600),
        ("  12h  ", 12 * 3600),
        ("+3d", 3 * DAY),
    ],
)
def test_durations_count_back_from_now(value: str, seconds_back: float) -> None:
    assert parse_time_value(value, "--older-than", now=NOW) == NOW - seconds_back


@pytest.mark.parametrize(
    ("value", "days"), [("30", 30), ("1", 1), ("1.5", 1.5), (".5", 0.5), ("90", 90)]
)
def test_a_bare_number_counts_days(value: str, days: float) -> None:
    assert parse_time_value(value, "--older-than", now=NOW) == NOW - days * DAY


def test_durations_default_to_the_current_time() -> None:
    before = time.time()
    point = parse_time_value("1h", "--newer-than")
    after = time.time()
    assert before - 3600 <= point <= after - 3600


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-07-05T14:30Z", datetime(2026, 7, 5, 14, 30, tzinfo=UTC)),
        ("2026-07-05 14:30z", datetime(2026, 7, 5, 14, 30, tzinfo=UTC)),
        ("2026-07-05 14:30:15Z", datetime(2026, 7, 5, 14, 30, 15, tzinfo=UTC)),
        ("2026-07-05 14:30:15.25Z", datetime(2026, 7, 5, 14, 30, 15, 250000, tzinfo=UTC)),
        ("2026-07-05T14:30+02:00", datetime(2026, 7, 5, 12, 30, tzinfo=UTC)),
        ("2026-07-05T14:30+0200", datetime(2026, 7, 5, 12, 30, tzinfo=UTC)),
        ("2026-07-05 14:30 -05", datetime(2026, 7, 5, 19, 30, tzinfo=UTC)),
        ("2026-07-05Z", datetime(2026, 7, 5, tzinfo=UTC)),
        (
            "2026-07-05T14:30+05:30",
            datetime(2026, 7, 5, 14, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        ),
    ],
)
def test_dates_with_a_zone_name_an_exact_moment(value: str, expected: datetime) -> None:
    assert parse_time_value(value, "--before", now=NOW) == expected.timestamp()


@pytest.mark.usefixtures("new_york")
@pytest.mark.parametrize(
    ("value", "utc"),
    [
        ("2026-07-05", datetime(2026, 7, 5, 4, 0, tzinfo=UTC)),  # EDT, UTC-4
        ("2026-07-05 14:30", datetime(2026, 7, 5, 18, 30, tzinfo=UTC)),
        ("2026-07-05T14:30", datetime(2026, 7, 5, 18, 30, tzinfo=UTC)),
        ("2026-07-05 14:30:15", datetime(2026, 7, 5, 18, 30, 15, tzinfo=UTC)),
        ("2026-01-05 14:30", datetime(2026, 1, 5, 19, 30, tzinfo=UTC)),  # EST, UTC-5
    ],
)
def test_dates_without_a_zone_are_local_time(value: str, utc: datetime) -> None:
    assert parse_time_value(value, "--after", now=NOW) == utc.timestamp()


def test_local_time_follows_the_process_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = {}
    try:
        for zone in ("UTC", "Asia/Tokyo"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            readings[zone] = parse_time_value("2026-07-05 12:00", "--after")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert readings["UTC"] - readings["Asia/Tokyo"] == 9 * 3600


def test_garbage_names_the_flag_and_the_accepted_forms() -> None:
    with pytest.raises(FilterError) as caught:
        parse_time_value("5x", "--older-than", now=NOW)
    assert str(caught.value) == (
        "--older-than: '5x' is not a duration (5h, 30m, 2d, 1w), a number of days, "
        "or a date (2026-07-05, 2026-07-05 14:30)"
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "is not a duration"),
        ("   ", "is not a duration"),
        ("yesterday", "is not a duration"),
        ("5 days", "is not a duration"),
        ("1d12h", "is not a duration"),
        ("2026-7-5", "is not a duration"),
        ("2026-07-05 14", "is not a duration"),
        ("٣d", "is not a duration"),  # Arabic-Indic digit: ASCII digits only
        ("-5d", "positive"),
        ("-3", "positive"),
        ("0", "positive"),
        ("0d", "positive"),
        ("0.0h", "positive"),
        ("2026-02-30", "not a valid date"),
        ("2026-13-01", "not a valid date"),
        ("0000-01-01", "not a valid date"),
        ("2026-07-05 25:00", "not a valid date"),
        ("2026-07-05 14:61", "not a valid date"),
        ("2026-07-05 14:30+25:00", "not a valid date"),
        ("2026-07-05 14:30+02:75", "not a valid date"),
        ("20260705", "before the year 1"),
        ("9" * 400, "before the year 1"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_flag(value: str, reason: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_time_value(value, "--newer-than", now=NOW)
    message = str(caught.value)
    assert message.startswith(f"--newer-than: {value!r} ")
    assert reason in message
    assert "\n" not in message


def test_filter_error_is_a_value_error() -> None:
    assert issubclass(FilterError, ValueError)


@given(st.text())
def test_arbitrary_text_gives_a_time_or_a_filter_error(value: str) -> None:
    _parses_or_refuses(value)


@given(st.text(alphabet="0123456789-+:.,TZ smhdwx", max_size=30))
def test_near_miss_text_gives_a_time_or_a_filter_error(value: str) -> None:
    _parses_or_refuses(value)


def _parses_or_refuses(value: str) -> None:
    try:
        point = parse_time_value(value, "--before", now=NOW)
    except FilterError as error:
        assert str(error).startswith("--before: ")
        assert "\n" not in str(error)
    else:
        assert math.isfinite(point)


@given(st.integers(min_value=1, max_value=10**5), st.sampled_from(sorted(DURATION_UNITS)))
def test_whole_durations_round_trip(amount: int, unit: str) -> None:
    expected = NOW - amount * DURATION_UNITS[unit]
    assert parse_time_value(f"{amount}{unit}", "--older-than", now=NOW) == expected
    assert parse_time_value(f"{amount}{unit.upper()}", "--older-than", now=NOW) == expected


@given(st.integers(min_value=1, max_value=10**5))
def test_bare_days_equal_day_durations(days: int) -> None:
    assert parse_time_value(str(days), "--older-than", now=NOW) == NOW - days * DAY
    assert parse_time_value(str(days), "--x", now=NOW) == parse_time_value(
        f"{days}d", "--x", now=NOW
    )


@given(
    st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
    )
)
def test_utc_timestamps_round_trip(moment: datetime) -> None:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse_time_value(text, "--after") == moment.timestamp()
