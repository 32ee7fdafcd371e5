"""Under ASGI the whole middleware chain is async (spine change for issue 9), so the LLM views run on the
event loop with no thread parked per request; the async WhiteNoise still serves static files."""

import asyncio

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.module_loading import import_string

from core.middleware import RequestIdMiddleware, WhiteNoiseMiddleware


def test_every_middleware_is_async_capable():
    for dotted in settings.MIDDLEWARE:
        assert getattr(import_string(dotted), "async_capable", False), dotted
    assert iscoroutinefunction(ASGIHandler()._middleware_chain)


def test_async_whitenoise_serves_files_and_passes_the_rest(tmp_path, settings):
    (tmp_path / "app.css").write_text("body{}")
    settings.STATIC_ROOT = tmp_path
    settings.STATIC_URL = "/static/"

    async def downstream(request):
        return HttpResponse("view")

    mw = WhiteNoiseMiddleware(downstream)
    assert iscoroutinefunction(mw)
    static = asyncio.run(mw(RequestFactory().get("/static/app.css")))
    assert static.status_code == 200 and b"".join(static.streaming_content) == b"body{}"
    other = asyncio.run(mw(RequestFactory().get("/v1/llm/models")))
    assert other.content == b"view"


def test_request_id_middleware_both_modes():
    def sync_view(request):
        return HttpResponse("s")

    async def async_view(request):
        return HttpResponse("a")

    sync_mw, async_mw = RequestIdMiddleware(sync_view), RequestIdMiddleware(async_view)
    assert not iscoroutinefunction(sync_mw) and iscoroutinefunction(async_mw)
    r1 = sync_mw(RequestFactory().get("/x"))
    r2 = asyncio.run(async_mw(RequestFactory().get("/x")))
    assert r1["X-Request-Id"].startswith("req_") and r2["X-Request-Id"].startswith("req_")
    big = RequestFactory().post("/x", data=b"{}", content_type="application/json",
                                CONTENT_LENGTH=str(settings.MAX_BODY_BYTES + 1))
    assert asyncio.run(async_mw(big)).status_code == 413
