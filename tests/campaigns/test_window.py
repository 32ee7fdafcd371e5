"""Sending-window math across zones and daylight-saving changes (wall-clock correct)."""

from datetime import UTC, datetime

import pytest

from campaigns.window import add_local_days, in_window, next_open

WEEKDAYS = ["mon", "tue", "wed", "thu", "fri"]


def utc(*a):
    return datetime(*a, tzinfo=UTC)


def w(tz, days=WEEKDAYS, start=9, end=17):
    return {"timezone": tz, "days": days, "start_hour": start, "end_hour": end}


def test_inside_window_is_now():
    assert next_open(w("UTC"), utc(2026, 11, 18, 10, 30)) == utc(2026, 11, 18, 10, 30)


@pytest.mark.parametrize("when, expected", [
    (utc(2026, 11, 18, 8, 59, 59), True),    # 09:59:59 Berlin (CET, +1)
    (utc(2026, 11, 18, 7, 59, 59), False),   # 08:59:59
    (utc(2026, 11, 18, 8, 0), True),         # 09:00 exactly: start inclusive
    (utc(2026, 11, 18, 16, 0), False),       # 17:00 exactly: end exclusive
    (utc(2026, 11, 21, 10, 0), False),       # Saturday
])
def test_in_window_berlin_winter(when, expected):
    assert in_window(w("Europe/Berlin"), when) is expected


def test_new_york_friday_evening_to_monday_after_spring_forward():
    # Fri 2026-03-06 18:00 EST (23:00 UTC); DST starts Sun 2026-03-08; Mon 09:00 EDT is 13:00 UTC (not 14:00)
    assert next_open(w("America/New_York"), utc(2026, 3, 6, 23, 0)) == utc(2026, 3, 9, 13, 0)
    # and the Friday before it opened at 14:00 UTC (09:00 EST)
    assert next_open(w("America/New_York"), utc(2026, 3, 6, 5, 0)) == utc(2026, 3, 6, 14, 0)


def test_berlin_fall_back():
    # DST ends Sun 2026-10-25 in Europe: Fri 09:00 CEST = 07:00 UTC, Mon 09:00 CET = 08:00 UTC
    assert next_open(w("Europe/Berlin"), utc(2026, 10, 23, 6, 0)) == utc(2026, 10, 23, 7, 0)
    assert next_open(w("Europe/Berlin"), utc(2026, 10, 23, 16, 0)) == utc(2026, 10, 26, 8, 0)


def test_start_inside_spring_forward_gap():
    # 02:00 does not exist in New York on 2026-03-08: the window opens at the first instant after the gap
    window = w("America/New_York", days=["sun"], start=2, end=5)
    assert next_open(window, utc(2026, 3, 8, 5, 0)) == utc(2026, 3, 8, 7, 0)  # 03:00 EDT
    assert in_window(window, utc(2026, 3, 8, 8, 59))  # 04:59 EDT
    assert not in_window(window, utc(2026, 3, 8, 9, 0))  # 05:00 EDT


def test_repeated_hour_on_fall_back():
    # 01:00-02:00 happens twice in New York on 2026-11-01; a 1-2 window is open from the first 01:00
    window = w("America/New_York", days=["sun"], start=1, end=2)
    assert next_open(window, utc(2026, 11, 1, 4, 0)) == utc(2026, 11, 1, 5, 0)  # 01:00 EDT


def test_half_hour_zone_and_date_line():
    assert next_open(w("Asia/Kolkata"), utc(2026, 11, 18, 3, 0)) == utc(2026, 11, 18, 3, 30)  # 09:00 IST
    # Auckland (NZDT, +13): Friday 17:00 local is Friday 04:00 UTC; the next opening is Monday 09:00 local,
    # which is Sunday 20:00 UTC
    assert next_open(w("Pacific/Auckland"), utc(2026, 11, 20, 4, 0)) == utc(2026, 11, 22, 20, 0)


def test_end_hour_24_and_all_days():
    window = w("UTC", days=["mon", "tue", "wed", "thu", "fri", "sat", "sun"], start=0, end=24)
    for when in (utc(2026, 11, 21, 0, 0), utc(2026, 11, 21, 23, 59, 59), utc(2026, 11, 22, 12, 0)):
        assert in_window(window, when)
    only_sat = w("UTC", days=["sat"], start=22, end=24)
    assert in_window(only_sat, utc(2026, 11, 21, 23, 59, 59))
    assert not in_window(only_sat, utc(2026, 11, 22, 0, 0))
    assert next_open(only_sat, utc(2026, 11, 22, 0, 0)) == utc(2026, 11, 28, 22, 0)


def test_add_local_days_keeps_wall_clock_across_dst():
    window = w("America/New_York")
    # Fri 2026-03-06 10:00 EST + 3 days = Mon 10:00 EDT: 71 real hours
    start = utc(2026, 3, 6, 15, 0)
    assert add_local_days(window, start, 3) == utc(2026, 3, 9, 14, 0)
    assert add_local_days(window, start, 0) == start
    assert add_local_days(w("UTC"), start, 2) == utc(2026, 3, 8, 15, 0)
