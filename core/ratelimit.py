"""Rolling-minute rate limit per key (SPEC 8, CONTRACT 2), shared by every process through Django's cache.

Counts live in one-second buckets; the window is the last 60 buckets. A request increments its bucket
first and then sums the window, so concurrent requests can only be refused too eagerly, never admitted
past the limit. A refused request gives its increment back. With REDIS_URL set the cache is Redis, so
every web process shares the counts: the window is one Redis hash per subject (field = second), and one
script (EVALSHA, one round trip) increments, sums, drops stale seconds and gives a refused increment back,
atomically. (It was INCR + EXPIRE + MGET of sixty bucket keys: building the sixty keys, packing them and
parsing sixty values back was two thirds of the LLM door's hold step on PostgreSQL + Redis.) Otherwise the
cache is the process's own memory (LocMemCache): the window is one cache entry per subject, a dict of buckets
updated under a lock (sixty separate entries cost a third of a millisecond per request to read back).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings
from redis.exceptions import NoScriptError

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


_shared: tuple | None = None  # (the CACHES["default"] entry it was built from, its backend, its redis client or None)


def _backend():
    """(backend, redis client or None): ONE cache backend object per process, built from CACHES["default"] (and
    rebuilt when that setting is replaced, as tests do). Not `caches["default"]`: Django keeps cache backends per
    context (asgiref Local), so code run in a copied context (the API door's worker threads, each request under
    Django's ASGI handler) got a new RedisCache object each call, hence a new connection pool and a new TCP
    connection to Redis per request: 1.2 ms of a metered call's 1.5 ms rate-limit hit on PostgreSQL + Redis
    (bench/RESULTS.md, twelfth session). A redis client is safe to share between threads (its pool)."""
    global _shared
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    conf = settings.CACHES["default"]
    shared = _shared
    if shared is None or shared[0] is not conf:
        backend = caches.create_connection("default")
        client = backend._cache.get_client(write=True) if isinstance(backend, RedisCache) else None
        shared = _shared = (conf, backend, client)
    return shared[1], shared[2]


def _redis():
    """(backend, client) when the cache is Redis, else None."""
    backend, client = _backend()
    return None if client is None else (backend, client)


# KEYS[1]: the subject's hash; ARGV: now (s), window (s), limit. Returns {allowed, total, oldest second or -1}.
# Seconds after this process's `now` (written by a process whose clock is ahead) are kept but not counted;
# seconds older than the window plus a margin are dropped (so a process whose clock runs more than 5 s ahead drops
# seconds the others still count: keep the web hosts' clocks synchronised, as any rate limit by time needs).
_HIT_SCRIPT = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIRE', KEYS[1], window + 5)
local flat = redis.call('HGETALL', KEYS[1])
local total, oldest, stale = 0, -1, {}
for i = 1, #flat, 2 do
  local s, c = tonumber(flat[i]), tonumber(flat[i + 1])
  if s <= now - window - 5 then
    stale[#stale + 1] = flat[i]
  elseif s > now - window and s <= now and c > 0 then
    total = total + c
    if oldest < 0 or s < oldest then oldest = s end
  end
end
if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end
if total > limit then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  return {0, total, oldest}
end
return {1, total, oldest}
"""
_script = None  # one redis Script (its SHA1; loaded into the server on first NOSCRIPT), run with any client


def _script_for(client):
    global _script
    script = _script
    if script is None:  # one Script object (its SHA1), usable with any client
        script = _script = client.register_script(_HIT_SCRIPT)
    return script


def _reply(reply) -> tuple[bool, int, int | None]:
    """The script's answer as (allowed, total in the window counting this request, oldest counted second)."""
    allowed, total, oldest = (int(v) for v in reply)
    return bool(allowed), total, (oldest if oldest >= 0 else None)


def _redis_hit(backend, client, subject: str, now_s: int, limit: int) -> tuple[bool, int, int | None]:
    """(allowed, total, oldest counted second) in one round trip."""
    return _reply(_script_for(client)(keys=[backend.make_and_validate_key(f"rl:{subject}")],
                                      args=[now_s, WINDOW, limit], client=client))


_local_lock = threading.Lock()


def _local_counts(subject: str, now_s: int, delta: int) -> dict[int, int]:
    """The process-local window of `subject` ({second: count}) after adding `delta` to this second's bucket."""
    key = f"rl:{subject}"
    with _local_lock:
        local = _backend()[0]
        window = {s: c for s, c in (local.get(key) or {}).items() if s > now_s - WINDOW}
        window[now_s] = window.get(now_s, 0) + delta
        local.set(key, window, timeout=WINDOW + 5)
    return window


def _local_hit(subject: str, now_s: int, limit: int) -> tuple[bool, int, int | None]:
    counts = _local_counts(subject, now_s, 1)
    total = 0
    oldest = None
    for s in range(now_s - WINDOW + 1, now_s + 1):
        c = counts.get(s) or 0
        if c and oldest is None:
            oldest = s
        total += c
    allowed = total <= limit
    if not allowed:
        _local_counts(subject, now_s, -1)
    return allowed, total, oldest


def _info(allowed: bool, total: int, oldest: int | None, now_s: int, limit: int) -> RateInfo:
    reset = (oldest + WINDOW - now_s) if oldest is not None else 0
    if not allowed:
        return RateInfo(limit=limit, remaining=0, reset=max(1, reset), allowed=False)
    return RateInfo(limit=limit, remaining=max(0, limit - total), reset=max(0, reset), allowed=True)


def hit(subject: str, *, limit: int | None = None, now: float | None = None) -> RateInfo:
    limit = settings.RATE_LIMIT_PER_MINUTE if limit is None else limit
    now_s = int(now if now is not None else time.time())
    redis = _redis()
    if redis is not None:
        allowed, total, oldest = _redis_hit(*redis, subject, now_s, limit)
    else:
        allowed, total, oldest = _local_hit(subject, now_s, limit)
    return _info(allowed, total, oldest, now_s, limit)


class PendingHit:
    """A hit whose request has left (`hit_start`) and whose answer is read by `result()`, so that the round trip to
    Redis overlaps other work of the same thread (the LLM door's hold statement). `result()` must be called (or
    `close()`): until then the Redis connection is kept out of its pool."""

    def __init__(self, subject: str, limit: int | None, now: float | None):
        self.subject = subject
        self.limit = settings.RATE_LIMIT_PER_MINUTE if limit is None else limit
        self.now_s = int(now if now is not None else time.time())
        self._conn = self._pool = self._info = None
        redis = _redis()
        if redis is None:
            self._info = _info(*_local_hit(subject, self.now_s, self.limit), self.now_s, self.limit)
            return
        backend, client = redis
        pool = client.connection_pool
        conn = pool.get_connection()
        try:
            conn.send_command("EVALSHA", _script_for(client).sha, 1, backend.make_and_validate_key(f"rl:{subject}"),
                              self.now_s, WINDOW, self.limit)
        except BaseException:
            pool.release(conn)
            raise
        self._conn, self._pool, self._backend, self._client = conn, pool, backend, client

    def result(self) -> RateInfo:
        if self._info is not None:
            return self._info
        conn, self._conn = self._conn, None
        try:
            counted = _reply(conn.read_response())
        except NoScriptError:  # (the server lost its scripts: a restart) the plain call loads it again
            self._pool.release(conn)
            conn = None
            counted = _redis_hit(self._backend, self._client, self.subject, self.now_s, self.limit)
        except BaseException:
            conn.disconnect()  # its answer may still come: never hand it to the next user of the pool
            raise
        finally:
            if conn is not None:
                self._pool.release(conn)
        self._info = _info(*counted, self.now_s, self.limit)
        return self._info

    def close(self) -> None:
        """Give the connection back without reading the answer (the hit still counts)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.disconnect()
            self._pool.release(conn)


def hit_start(subject: str, *, limit: int | None = None, now: float | None = None) -> PendingHit:
    """`hit` in two halves: the request leaves now, `.result()` reads the answer (the same script, the same counts)."""
    return PendingHit(subject, limit, now)
