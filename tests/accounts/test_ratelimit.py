import subprocess
import sys
import textwrap

import pytest
from django.conf import settings as dj_settings

from core import ratelimit


def test_300th_passes_301st_is_429(api):
    for i in range(299):
        assert api.get("/v1/usage").status_code == 200, i
    last = api.get("/v1/usage")
    assert last.status_code == 200 and last["RateLimit-Remaining"] == "0"
    over = api.post("/v1/test_echo", {})
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "rate_limited"
    assert int(over["Retry-After"]) >= 1 and over["RateLimit-Remaining"] == "0"


def test_limit_is_per_key(api, make_api, settings):
    settings.RATE_LIMIT_PER_MINUTE = 3
    other, _, _ = make_api()
    for _ in range(3):
        assert api.get("/v1/usage").status_code == 200
    assert api.get("/v1/usage").status_code == 429
    assert other.get("/v1/usage").status_code == 200


def test_window_rolls(settings):
    settings.RATE_LIMIT_PER_MINUTE = 2
    t = 1_000_000.0
    assert ratelimit.hit("s", now=t).allowed
    assert ratelimit.hit("s", now=t + 30).allowed
    blocked = ratelimit.hit("s", now=t + 59)
    assert not blocked.allowed and blocked.reset == 1
    assert ratelimit.hit("s", now=t + 60).allowed  # the first hit left the window
    assert not ratelimit.hit("s", now=t + 61).allowed


def test_refused_requests_do_not_count(settings):
    settings.RATE_LIMIT_PER_MINUTE = 1
    t = 2_000_000.0
    assert ratelimit.hit("r", now=t).allowed
    for _ in range(5):
        assert not ratelimit.hit("r", now=t + 1).allowed
    assert ratelimit.hit("r", now=t + 60).allowed


def test_operators_can_change_the_limit(api, settings):
    settings.RATE_LIMIT_PER_MINUTE = 1
    assert api.get("/v1/usage")["RateLimit-Limit"] == "1"
    assert api.get("/v1/usage").status_code == 429


@pytest.mark.skipif(not dj_settings.REDIS_URL, reason="cross-process sharing needs REDIS_URL (runs in the PostgreSQL + Redis CI pass)")
def test_shared_by_two_processes_through_redis(settings):
    settings.RATE_LIMIT_PER_MINUTE = 300
    subject = "xproc-test"
    prefix = dj_settings.CACHES["default"].get("KEY_PREFIX", "")
    script = textwrap.dedent(f"""
        import django, os
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
        django.setup()
        from django.conf import settings
        settings.CACHES["default"]["KEY_PREFIX"] = {prefix!r}  # the same namespace as the test process
        from core import ratelimit
        print(sum(ratelimit.hit({subject!r}, limit=300).allowed for _ in range(200)))
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=str(dj_settings.BASE_DIR))
    mine = sum(ratelimit.hit(subject, limit=300).allowed for _ in range(200))
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0
    assert mine + int(out.strip()) == 300


def test_a_hit_in_two_halves_counts_and_answers_as_a_hit_does(settings):
    """hit_start: the request leaves at once and `.result()` reads the answer later (the LLM door overlaps it with
    its hold statement); the same script and counts as `hit`, on Redis and in process memory alike."""
    settings.RATE_LIMIT_PER_MINUTE = 3
    t = 3_000_000.0
    first = ratelimit.hit_start("halves", now=t)
    second = ratelimit.hit_start("halves", now=t + 1)  # two requests in flight at once
    assert (first.result().remaining, second.result().remaining) == (2, 1)
    assert first.result() is first.result()  # read once
    assert ratelimit.hit("halves", now=t + 2).allowed
    refused = ratelimit.hit_start("halves", now=t + 3).result()
    assert not refused.allowed and refused.reset == 57 and refused.remaining == 0
    unread = ratelimit.hit_start("halves-closed", now=t)
    unread.close()  # given back unread: it still counted
    assert ratelimit.hit("halves-closed", now=t).remaining == 1


@pytest.mark.skipif(not dj_settings.REDIS_URL, reason="the script cache is Redis's (runs in the PostgreSQL + Redis CI pass)")
def test_a_hit_in_two_halves_survives_a_redis_that_lost_its_scripts(settings):
    settings.RATE_LIMIT_PER_MINUTE = 3
    ratelimit.hit("noscript", now=4_000_000.0)  # the script is loaded
    ratelimit._backend()[1].script_flush()  # as after a Redis restart
    assert ratelimit.hit_start("noscript", now=4_000_001.0).result().remaining == 1  # loaded again, counted once
    assert ratelimit.hit("noscript", now=4_000_002.0).remaining == 0
