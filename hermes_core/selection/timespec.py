"""Time values of the session filters (SPEC F1): ``--older-than``, ``--newer-than``,
``--before`` and ``--after``.

Every value becomes a POSIX timestamp. Accepted forms (case-insensitive, surrounding spaces
ignored):

* a duration back from now: a positive number and a unit, ``s`` ``m`` ``h`` ``d`` ``w``
  (``90s``, ``30m``, ``5h``, ``2d``, ``1w``, ``1.5h``; a space before the unit is allowed:
  ``5 h``);
* a bare positive number of days (``30``, ``1.5``);
* an ISO date or date and time: ``2026-07-05``, ``2026-07-05 14:30``, ``2026-07-05T14:30``,
  ``2026-07-05 14:30:15`` (fractions of a second allowed), optionally followed by a zone
  (``Z``, ``+02:00``, ``+0200``, ``-05``). Without a zone the value is local time.

Anything else raises :class:`FilterError`, a one-line message that names the flag. This module
imports nothing heavy: the command line loads it on every start.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["DURATION_UNITS", "FilterError", "parse_time_value"]


class FilterError(ValueError):
    """A filter value that cannot be used; the message is one line and names the flag."""


DURATION_UNITS: dict[str, float] = {
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 7 * 86400.0,
}
"""Seconds per duration unit; a number without a unit counts days."""

_EARLIEST = datetime(1, 1, 2, tzinfo=UTC).timestamp()
"""Durations may not reach further back than this (it catches ``--before 20260705``)."""

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_DURATION = re.compile(
    rf"(?P<sign>[-+]?)\s*(?P<number>{_NUMBER})\s*(?P<unit>[smhdw]?)", re.ASCII | re.IGNORECASE
)
_DATE_TIME = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(?:[T ]\s*(?P<hour>\d{2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,6}))?)?)?"
    r"\s*(?P<zone>Z|[-+]\d{2}(?::?\d{2})?)?",
    re.ASCII | re.IGNORECASE,
)

_FORMS = "a duration (5h, 30m, 2d, 1w), a number of days, or a date (2026-07-05, 2026-07-05 14:30)"


def parse_time_value(value: str, flag: str, *, now: float | None = None) -> float:
    """The POSIX time ``value`` stands for; durations count back from ``now`` (default: now).

    Raises :class:`FilterError` naming ``flag`` (such as ``--older-than``) when ``value`` is
    not a positive duration, a positive number of days or a valid date.
    """
    text = value.strip()
    duration = _DURATION.fullmatch(text)
    if duration is not None:
        return _point_back_from(now, duration, value, flag)
    stamp = _DATE_TIME.fullmatch(text)
    if stamp is not None:
        return _timestamp_of(stamp, value, flag)
    raise FilterError(f"{flag}: {value!r} is not {_FORMS}")


def _point_back_from(now: float | None, duration: re.Match[str], value: str, flag: str) -> float:
    amount = float(duration["number"])
    if duration["sign"] == "-" or amount == 0:
        raise FilterError(f"{flag}: {value!r} is not a positive duration or number of days")
    seconds = amount * DURATION_UNITS[(duration["unit"] or "d").lower()]
    start = time.time() if now is None else now
    point = start - seconds
    if not math.isfinite(point) or point < _EARLIEST:
        raise FilterError(f"{flag}: {value!r} reaches back before the year 1")
    return point


def _timestamp_of(stamp: re.Match[str], value: str, flag: str) -> float:
    fraction = stamp["fraction"] or ""
    try:
        moment = datetime(
            int(stamp["year"]),
            int(stamp["month"]),
            int(stamp["day"]),
            int(stamp["hour"] or 0),
            int(stamp["minute"] or 0),
            int(stamp["second"] or 0),
            int(fraction.ljust(6, "0")) if fraction else 0,
            tzinfo=_zone_of(stamp["zone"]),
        )
        return moment.timestamp()
    except (ValueError, OverflowError, OSError) as error:
        raise FilterError(f"{flag}: {value!r} is not a valid date or time ({error})") from None


def _zone_of(zone: str | None) -> timezone | None:
    """The fixed offset a zone suffix names; ``None`` (no suffix) means local time."""
    if zone is None:
        return None
    if zone.upper() == "Z":
        return UTC
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if minutes >= 60:
        raise ValueError(f"zone minutes out of range in {zone}")
    offset = timedelta(hours=hours, minutes=minutes)
    return timezone(-offset if zone[0] == "-" else offset)
