"""Early start: what a process may count on before the database and the rate limit confirm it (`EarlyStart`),
learned from the answers of earlier calls, shared by every door of the process (`early_start`)."""

from __future__ import annotations

import threading
import time

from core.ratelimit import RateInfo


class EarlyStart:
    """Per process: how much of a workspace's available balance, and of a key's rate limit, a door may count on
    before the database and the rate limit confirm them, so that a verb's abandonable work (the LLM door's
    provider request) can start while they are checked (`api.pipeline.admit_early`, and `early` in
    `api.pipeline.admit`) instead of after.

    Learned from the last answers: every settlement returns the workspace's available balance, and that value
    (fresh for EARLY_START_SECONDS) is the money allowance; every rate-limit hit returns the key's remaining
    requests, and that count (fresh for RATE_START_SECONDS) is the rate allowance. Each call started early
    takes its hold amount and one request out of them at once, under a lock. A reading does not count calls
    claimed meanwhile and not yet confirmed, so an allowance can run ahead by the calls in flight. A refused hold
    forgets the workspace and a refused rate-limit hit the key: their next calls are checked first, as they
    always were, until a reading teaches it again. A key's budget (billing.models.KeyBudget) is a third
    allowance, learned from every hold the key places (how far below its nearest limit it is, or that it has
    none) and forgotten when its budget refuses a hold: a call starts early only while that is known and covers
    its hold; a limit set meanwhile in another process can cost one abandoned provider request within
    EARLY_START_SECONDS, never a charge. A reading taken before a refusal (on another database
    thread, arriving late: `read_at`) teaches nothing. The allowances are only an optimisation: the hold itself
    (the conditional UPDATE) and the rate-limit hit still decide, so nothing can overspend or pass the limit, no byte reaches the client
    before both are confirmed, and a refused call is the same 402 or 429 with nothing charged. What an
    allowance ahead of the truth costs (calls in flight, or another process or verb spending meanwhile) is a
    provider request that is started and then abandoned."""

    def __init__(self, seconds: float, rate_seconds: float = 5.0):
        self.seconds = seconds
        self.rate_seconds = rate_seconds
        self._lock = threading.Lock()
        self._left: dict = {}  # workspace id -> (micro-credits, monotonic deadline)
        self._rate: dict = {}  # key id -> (requests, monotonic deadline)
        self._budget: dict = {}  # key id -> (micro-credits below its nearest limit or None, monotonic deadline)
        self._refused: dict = {}  # workspace or ("key", key id) -> monotonic time of its last refusal

    @staticmethod
    def _covers(left, amount: int, now: float) -> bool:
        return left is not None and left[0] >= amount and left[1] >= now

    def claim(self, workspace_id, amount: int, key_id=None, budget_key=None) -> bool:
        """Take `amount` from the workspace's allowance, (with `key_id`) one request from the key's, and (with
        `budget_key`) `amount` from that key's budget allowance (a key without limits has an unbounded one, but
        it must be known); all or nothing."""
        now = time.monotonic()
        with self._lock:
            left = self._left.get(workspace_id)
            if amount <= 0 or not self._covers(left, amount, now):
                return False
            room = None
            if budget_key is not None:
                room = self._budget.get(budget_key)
                if room is None or room[1] < now or (room[0] is not None and room[0] < amount):
                    return False
            if key_id is not None:
                rate = self._rate.get(key_id)
                if not self._covers(rate, 1, now):
                    return False
                self._rate[key_id] = (rate[0] - 1, rate[1])
            if room is not None and room[0] is not None:
                self._budget[budget_key] = (room[0] - amount, room[1])
            self._left[workspace_id] = (left[0] - amount, left[1])
            return True

    def learn_budget(self, key_id, room: int | None, read_at: float | None = None, refused: bool = False) -> None:
        """A reserve's reading of the key's budget: `room` micro-credits left below its nearest limit (None: the
        key has no limits); `refused` (the budget refused a hold): forget the key until a reading teaches it."""
        with self._lock:
            if refused:
                self._refuse(self._budget, key_id, ("budget", key_id))
            else:
                self._keep(self._budget, key_id, room, self.seconds, read_at, ("budget", key_id))

    def _keep(self, table: dict, subject, value, seconds: float, read_at: float | None, refusal_of) -> None:
        """Under the lock: `table[subject] = (value, deadline)`, unless the reading predates the last refusal; a
        reading is fresh for `seconds` from when it was taken (`read_at`, else now)."""
        taken = time.monotonic() if read_at is None else read_at
        if taken < self._refused.get(refusal_of, float("-inf")):
            return
        if len(table) >= 10_000:
            table.clear()
        table[subject] = (value, taken + seconds)

    def _refuse(self, table: dict, subject, refusal_of) -> None:
        now = time.monotonic()
        table.pop(subject, None)
        if len(self._refused) >= 10_000:  # a refusal older than every freshness window can no longer matter
            horizon = now - max(self.seconds, self.rate_seconds)
            self._refused = {k: t for k, t in self._refused.items() if t >= horizon}
        self._refused[refusal_of] = now

    def learn(self, workspace_id, available: int | None, read_at: float | None = None) -> None:
        """A settlement's reading of the available balance (`read_at`: monotonic time the statement started)."""
        if available is None:
            return
        with self._lock:
            self._keep(self._left, workspace_id, available, self.seconds, read_at, workspace_id)

    def learn_rate(self, key_id, rate: RateInfo, read_at: float | None = None) -> None:
        """A rate-limit hit's answer: `remaining` more requests, or none (refused: forget the key)."""
        with self._lock:
            if not rate.allowed or rate.remaining <= 0:
                self._refuse(self._rate, key_id, ("key", key_id))
            else:
                self._keep(self._rate, key_id, rate.remaining, self.rate_seconds, read_at, ("key", key_id))

    def forget(self, workspace_id) -> None:
        with self._lock:
            self._refuse(self._left, workspace_id, workspace_id)


EARLY_START_SECONDS = 5.0
RATE_START_SECONDS = 5.0
early_start = EarlyStart(EARLY_START_SECONDS, RATE_START_SECONDS)


def budget_room(hold) -> int | None:
    """How far below its nearest limit the key's budget was left by `hold` (None: the key has no limits)."""
    budget = getattr(hold, "budget_after", None)
    if budget is None:
        return None
    room = [limit - spent for limit, spent in ((budget.daily_limit, budget.day), (budget.monthly_limit, budget.month))
            if limit is not None]
    return min(room) if room else None
