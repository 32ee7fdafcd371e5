"""Sending-window math in the campaign's time zone, on wall-clock time, so daylight-saving changes are right.

A window is `{"timezone": IANA name, "days": ["mon", ...], "start_hour": h0, "end_hour": h1}` with
0 <= h0 < h1 <= 24: sends happen on those local days from h0:00 (inclusive) to h1:00 (exclusive).

`"timezone": "lead"` (with `"fallback_timezone"`) means each lead's own zone: `for_lead` turns such a window
into the concrete window of one lead, which every function below then takes.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
LEAD_ZONE = "lead"


def per_lead(window: dict) -> bool:
    return window.get("timezone") == LEAD_ZONE


def for_lead(window: dict, lead_timezone: str = "") -> dict:
    """The concrete window of one lead: a per-lead window takes the lead's zone (or the fallback); any other
    window is returned as is."""
    if not per_lead(window):
        return window
    return {**window, "timezone": lead_timezone or window["fallback_timezone"]}


def _local_at(day, hour: int, tz: ZoneInfo) -> datetime:
    """The instant of wall-clock `day hour:00` in tz; hour 24 is the next midnight. A wall time that does not
    exist (spring-forward gap) resolves to the first instant after the gap."""
    if hour >= 24:
        return _local_at(day + timedelta(days=1), 0, tz)
    naive = datetime.combine(day, time(hour))
    aware = naive.replace(tzinfo=tz)
    # round-trip through UTC: a non-existent wall time comes back shifted past the gap
    return aware.astimezone(UTC).astimezone(tz)


def in_window(window: dict, when: datetime) -> bool:
    tz = ZoneInfo(window["timezone"])
    local = when.astimezone(tz)
    day = DAY_NAMES[local.weekday()]
    if day not in window["days"]:
        return False
    start = _local_at(local.date(), window["start_hour"], tz)
    end = _local_at(local.date(), window["end_hour"], tz)
    return start <= when < end


def next_open(window: dict, after: datetime) -> datetime:
    """`after` itself if it is inside the window, else the start of the next window opening (aware, UTC)."""
    tz = ZoneInfo(window["timezone"])
    local = after.astimezone(tz)
    for offset in range(8):
        day = local.date() + timedelta(days=offset)
        if DAY_NAMES[day.weekday()] not in window["days"]:
            continue
        start = _local_at(day, window["start_hour"], tz)
        end = _local_at(day, window["end_hour"], tz)
        if after < end:
            return max(after, start).astimezone(UTC)
    raise ValueError("sending window has no open day")  # validated at creation: days is never empty


def add_local_days(window: dict, when: datetime, days: int) -> datetime:
    """`when` plus `days` calendar days on the campaign's wall clock (10:00 stays 10:00 across a DST change)."""
    if not days:
        return when
    tz = ZoneInfo(window["timezone"])
    local = when.astimezone(tz)
    naive = local.replace(tzinfo=None) + timedelta(days=days)
    return naive.replace(tzinfo=tz).astimezone(UTC).astimezone(UTC)
