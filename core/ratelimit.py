"""Rolling-minute rate limit per key (SPEC 8, CONTRACT 2), shared by every process through Django's cache.

Counts live in one-second buckets; the window is the last 60 buckets. A request increments its bucket
first and then sums the window, so concurrent requests can only be refused too eagerly, never admitted
past the limit. A refused request gives its increment back. With REDIS_URL set the cache is Redis, so
every web process shares the counts (one key per bucket, one pipelined round trip). Otherwise the cache
is the process's own memory (LocMemCache): the window is one cache entry per subject, a dict of buckets
updated under a lock (sixty separate entries cost a third of a millisecond per request to read back).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

WINDOW = 60


@dataclass
class RateInfo:
    limit: int
    remaining: int
    reset: int  # seconds until a slot frees up
    allowed: bool

    def headers(self) -> dict[str, str]:
        h = {"RateLimit-Limit": str(self.limit), "RateLimit-Remaining": str(self.remaining), "RateLimit-Reset": str(self.reset)}
        if not self.allowed:
            h["Retry-After"] = str(max(1, self.reset))
        return h


def _bucket_key(subject: str, second: int) -> str:
    return f"rl:{subject}:{second}"


def _redis():
    """The redis client behind Django's RedisCache, or None for any other cache backend."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return None
    return backend, backend._cache.get_client(write=True)


def _redis_counts(backend, client, subject: str, now_s: int, seconds: list[int]) -> dict[int, int]:
    """Increment this second's bucket and read the window in one round trip (a pipeline: INCR, EXPIRE, MGET).
    Same keys and values as the cache API (Django's Redis serializer stores integers unpickled)."""
    keys = [backend.make_and_validate_key(_bucket_key(subject, s)) for s in seconds]
    pipe = client.pipeline(transaction=False)
    pipe.incr(keys[-1])
    pipe.expire(keys[-1], WINDOW + 5)
    pipe.mget(keys)
    _, _, values = pipe.execute()
    return {s: int(v) for s, v in zip(seconds, values, strict=True) if v is not None}


_local_lock = threading.Lock()


def _local_counts(subject: str, now_s: int, delta: int) -> dict[int, int]:
    """The process-local window of `subject` ({second: count}) after adding `delta` to this second's bucket."""
    key = f"rl:{subject}"
    with _local_lock:
        window = {s: c for s, c in (cache.get(key) or {}).items() if s > now_s - WINDOW}
        window[now_s] = window.get(now_s, 0) + delta
        cache.set(key, window, timeout=WINDOW + 5)
    return window


def hit(subject: str, *, limit: int | None = None, now: float | None = None) -> RateInfo:
    limit = settings.RATE_LIMIT_PER_MINUTE if limit is None else limit
    now_s = int(now if now is not None else time.time())
    key = _bucket_key(subject, now_s)
    seconds = list(range(now_s - WINDOW + 1, now_s + 1))
    redis = _redis()
    if redis is not None:
        counts = _redis_counts(*redis, subject, now_s, seconds)
    else:
        counts = _local_counts(subject, now_s, 1)
    total = 0
    oldest = None
    for s in seconds:
        c = counts.get(s) or 0
        if c and oldest is None:
            oldest = s
        total += c
    reset = (oldest + WINDOW - now_s) if oldest is not None else 0
    if total > limit:
        if redis is None:
            _local_counts(subject, now_s, -1)
        else:
            try:
                cache.decr(key)
            except ValueError:
                pass
        return RateInfo(limit=limit, remaining=0, reset=max(1, reset), allowed=False)
    return RateInfo(limit=limit, remaining=max(0, limit - total), reset=max(0, reset), allowed=True)
