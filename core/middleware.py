import json
import logging

from django.conf import settings

from core.errors import MethodNotAllowed, PayloadTooLarge, error_response
from core.ids import new_id


class RequestIdMiddleware:
    """Gives every request an id (`req_…`), echoed as X-Request-Id on every response, errors included.

    Also turns the few responses Django produces outside our views (405 from class-based views, oversized
    bodies) into the error envelope.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = new_id("req_")
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_BODY_BYTES:
            response = error_response(PayloadTooLarge(), request)
        else:
            response = self.get_response(request)
            if response.status_code == 405 and not _is_json(response):
                response = error_response(MethodNotAllowed(), request)
        response["X-Request-Id"] = getattr(response, "_request_id_override", None) or request.request_id
        return response

    def process_exception(self, request, exception):
        # Faults outside the verb pipeline (console pages, webhooks): log the traceback with the request id;
        # Django then renders handler500, which is the `internal` envelope without internals.
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
