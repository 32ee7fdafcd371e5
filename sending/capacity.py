"""A mailbox's sending capacity: how many messages it may send in a UTC day, and its warm-up ramp.

Every mailbox sends at most DAILY_CAP a day (or its own lower `daily_limit`); a new live mailbox starts at
WARMUP_START on the day it was activated and may send WARMUP_STEP more each day after, up to that cap. Sandbox
mailboxes (nothing leaves the machine) and mailboxes without an activation date have no ramp. Campaigns count
what a mailbox has sent against these figures; the console and `get_operation` show when the ramp ends.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

DAILY_CAP = 25
WARMUP_START = 5  # a new live mailbox sends this many on its first day ...
WARMUP_STEP = 2  # ... and this many more each day after, up to DAILY_CAP


def day_start(now: datetime) -> datetime:
    """Daily caps count per UTC calendar day."""
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def daily_cap(mailbox, now: datetime) -> int:
    """At most 25 a day (or the mailbox's own lower limit); a live mailbox ramps up from WARMUP_START."""
    cap = min(DAILY_CAP, mailbox.daily_limit or DAILY_CAP)
    if mailbox.provider != "sandbox" and mailbox.activated_at:
        age_days = max(0, (now - mailbox.activated_at).days)
        cap = min(cap, WARMUP_START + WARMUP_STEP * age_days)
    return cap


def warmup_full_at(mailbox) -> datetime | None:
    """When `daily_cap` stops ramping for a live mailbox (None for sandbox mailboxes or before activation)."""
    if mailbox.provider == "sandbox" or not mailbox.activated_at:
        return None
    cap = min(DAILY_CAP, mailbox.daily_limit or DAILY_CAP)
    days = max(0, -(-(cap - WARMUP_START) // WARMUP_STEP))
    return mailbox.activated_at + timedelta(days=days)
