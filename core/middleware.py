import json
import logging
import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from whitenoise.middleware import WhiteNoiseMiddleware as _WhiteNoiseMiddleware

from core.errors import HttpsRequired, MethodNotAllowed, PayloadTooLarge, error_response
from core.https import refuses_request
from core.ids import new_id

# Swagger UI and Redoc (drf-spectacular's pages) bootstrap with inline scripts: no CSP there.
CSP_EXEMPT_PREFIXES = ("/docs",)


class RequestIdMiddleware:
    """Gives every request an id (`req_…`), echoed as X-Request-Id on every response, errors included.

    Also turns the few responses Django produces outside our views (405 from class-based views, oversized
    bodies) into the error envelope (keeping `Allow`), and gives HTML pages (the console, sign-in, unsubscribe
    and admin pages) the CONTENT_SECURITY_POLICY header.
    """

    # Sync and async capable: under ASGI an async view (the streaming LLM passthrough) then runs on the event
    # loop without the request being parked in a worker thread. `request.started_at` (perf_counter) lets a view
    # report the time it added.
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.async_mode:
            return self.__acall__(request)
        early = self._before(request)
        return self._after(request, early if early is not None else self.get_response(request), early is not None)

    async def __acall__(self, request):
        early = self._before(request)
        response = early if early is not None else await self.get_response(request)
        return self._after(request, response, early is not None)

    @staticmethod
    def _before(request):
        request.started_at = time.perf_counter()
        request.request_id = new_id("req_")
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_BODY_BYTES:
            return error_response(PayloadTooLarge(), request)
        if refuses_request(request):  # before SecurityMiddleware could redirect it
            return error_response(HttpsRequired(), request)
        return None

    @staticmethod
    def _after(request, response, early: bool):
        if not early and response.status_code == 405 and not _is_json(response):
            allow = response.get("Allow")
            response = error_response(MethodNotAllowed(), request)
            if allow:
                response["Allow"] = allow  # every 405 says what is allowed
        response["X-Request-Id"] = getattr(response, "_request_id_override", None) or request.request_id
        policy = settings.CONTENT_SECURITY_POLICY
        if (policy and "Content-Security-Policy" not in response
                and response.get("Content-Type", "").startswith("text/html")
                and not request.path.startswith(CSP_EXEMPT_PREFIXES)):
            response["Content-Security-Policy"] = policy
        return response

    def process_exception(self, request, exception):
        # Faults outside the verb pipeline (console pages, webhooks): log the traceback with the request id;
        # Django then renders handler500, which is the `internal` envelope without internals. A 404 or 403 that
        # a view raised on purpose is an answer, not a fault: not logged.
        from django.core.exceptions import PermissionDenied
        from django.http import Http404

        if isinstance(exception, Http404 | PermissionDenied):
            return None
        logging.getLogger("core.errors").error(
            "unhandled exception (request_id=%s) on %s %s", getattr(request, "request_id", None), request.method,
            request.path, exc_info=exception,
        )
        return None


def _is_json(response) -> bool:
    if not response.get("Content-Type", "").startswith("application/json"):
        return False
    try:
        return "error" in json.loads(response.content)
    except (ValueError, AttributeError):
        return False


class WhiteNoiseMiddleware(_WhiteNoiseMiddleware):
    """WhiteNoise, async capable: a request that is not for a static file passes straight through on the event
    loop (WhiteNoise 6 is sync only, which parks every ASGI request in a thread for its whole duration).
    Static files themselves are still served by WhiteNoise's sync code, in a thread."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, *args, **kwargs):
        super().__init__(get_response, *args, **kwargs)
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.async_mode:
            return self.__acall__(request)
        return super().__call__(request)

    async def __acall__(self, request):
        if self.autorefresh:
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return await sync_to_async(self.serve)(static_file, request)
        return await self.get_response(request)
