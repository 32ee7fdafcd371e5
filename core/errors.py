"""Domain errors and the one function that renders the error envelope (CONTRACT section 2).

Raise, never return, errors: every non-2xx response of the service is rendered by `error_body`.
"""

from __future__ import annotations

import logging

from django.http import JsonResponse

logger = logging.getLogger("core.errors")


class DomainError(Exception):
    code = "internal"
    http_status = 500
    message = "Internal error."
    retryable = False

    def __init__(self, message: str | None = None, *, details: dict | None = None, headers: dict | None = None):
        super().__init__(message or self.message)
        self.message = message or self.message
        self.details = details
        self.headers = headers or {}


def _error(name: str, code: str, status: int, message: str, retryable: bool = False) -> type[DomainError]:
    return type(name, (DomainError,), {"code": code, "http_status": status, "message": message, "retryable": retryable})


InvalidRequest = _error("InvalidRequest", "invalid_request", 400, "The request is invalid.")
ConfirmationInvalid = _error("ConfirmationInvalid", "confirmation_invalid", 400, "The confirmation token is not valid for this call.")
ModelNotAllowed = _error("ModelNotAllowed", "model_not_allowed", 400, "This model is not on the allowlist.")


class Unauthenticated(DomainError):
    """401, always with the challenge `WWW-Authenticate: Bearer` (RFC 6750 section 3, RFC 9110 section 15.5.2)."""

    code = "unauthenticated"
    http_status = 401
    message = "A valid API key is required: Authorization: Bearer service_sk_live_…"

    def __init__(self, message: str | None = None, *, details: dict | None = None, headers: dict | None = None):
        super().__init__(message, details=details, headers={"WWW-Authenticate": "Bearer", **(headers or {})})


InsufficientCredits = _error("InsufficientCredits", "insufficient_credits", 402, "Available credits are below what this call must hold.")
SpendCeilingExceeded = _error("SpendCeilingExceeded", "spend_ceiling_exceeded", 402, "max_credits is below the price of this call.")
KeyBudgetExceeded = _error("KeyBudgetExceeded", "key_budget_exceeded", 402, "This key's spend limit for the period would be passed; nothing was charged.")
InsufficientScope = _error("InsufficientScope", "insufficient_scope", 403, "This API key lacks the scope this call needs.")
HttpsRequired = _error("HttpsRequired", "https_required", 403, "This API answers over https only: call the https BASE_URL. "
                       "A key sent over plain http may have been seen; consider rotating it.")
ConfirmationDenied = _error("ConfirmationDenied", "confirmation_denied", 403, "A human denied this confirmation token.")
NotFound = _error("NotFound", "not_found", 404, "Not found.")
MethodNotAllowed = _error("MethodNotAllowed", "method_not_allowed", 405, "Method not allowed.")
IdempotencyKeyReused = _error("IdempotencyKeyReused", "idempotency_key_reused", 409, "This Idempotency-Key was used with a different verb or body.")
IdempotencyInProgress = _error("IdempotencyInProgress", "idempotency_in_progress", 409, "A request with this Idempotency-Key is still running.")
ConfirmationPending = _error("ConfirmationPending", "confirmation_pending", 409, "The confirmation token has not been approved yet: ask a human to approve it, then call again.")
ConfirmationUsed = _error("ConfirmationUsed", "confirmation_used", 409, "The confirmation token was already used.")
SendingCapacityRequired = _error("SendingCapacityRequired", "sending_capacity_required", 409, "No active sending mailbox: buy capacity with setup_sending first.")
CampaignNotDraft = _error("CampaignNotDraft", "campaign_not_draft", 409, "The campaign is not a draft.")
LaunchAborted = _error("LaunchAborted", "launch_aborted", 409, "A suppression removal could not be confirmed; the campaign stays a draft.")
CampaignNotLaunched = _error("CampaignNotLaunched", "campaign_not_launched", 409, "Only a launched campaign can be paused.")
CampaignNotPaused = _error("CampaignNotPaused", "campaign_not_paused", 409, "The campaign is not paused: there is nothing to resume.")
RecipientSuppressed = _error("RecipientSuppressed", "recipient_suppressed", 409, "The address is suppressed as unsubscribed or bounced: it cannot be answered.")
MailboxUnavailable = _error("MailboxUnavailable", "mailbox_unavailable", 409, "The mailbox that carried this conversation cannot send right now; details.reason says why.")
ConfirmationExpired = _error("ConfirmationExpired", "confirmation_expired", 410, "The confirmation token has expired.")
PayloadTooLarge = _error("PayloadTooLarge", "payload_too_large", 413, "The request body is larger than 16 MiB.")
UnsupportedMediaType = _error("UnsupportedMediaType", "unsupported_media_type", 415, "Send the body as JSON with Content-Type: application/json.")
IdempotencyKeyRequired = _error("IdempotencyKeyRequired", "idempotency_key_required", 428, "This call needs an Idempotency-Key header.")
RateLimited = _error("RateLimited", "rate_limited", 429, "Rate limit exceeded; retry after the Retry-After seconds.", True)
Internal = _error("Internal", "internal", 500, "Internal error; retry with the same Idempotency-Key.", True)
ProviderUnavailable = _error("ProviderUnavailable", "provider_unavailable", 502, "Every provider able to answer failed; nothing was charged. Retry later.", True)
OperationUnknownState = _error("OperationUnknownState", "operation_unknown_state", 502, "The outcome of an external action is unknown; poll its status, do not retry blindly.")

ALL_ERRORS: list[type[DomainError]] = [
    InvalidRequest, ConfirmationInvalid, ModelNotAllowed, Unauthenticated, InsufficientCredits,
    SpendCeilingExceeded, KeyBudgetExceeded, InsufficientScope, HttpsRequired, ConfirmationDenied, NotFound,
    MethodNotAllowed,
    IdempotencyKeyReused, IdempotencyInProgress, ConfirmationPending, ConfirmationUsed,
    SendingCapacityRequired, CampaignNotDraft, LaunchAborted, CampaignNotLaunched, CampaignNotPaused,
    RecipientSuppressed, MailboxUnavailable, ConfirmationExpired, PayloadTooLarge,
    UnsupportedMediaType, IdempotencyKeyRequired, RateLimited, Internal, ProviderUnavailable,
    OperationUnknownState,
]
RETRYABLE_CODES = frozenset(e.code for e in ALL_ERRORS if e.retryable)
# Outcomes an idempotent retry must execute again instead of replaying: the retryable codes (CONTRACT 2), and
# two outcomes where nothing happened and the caller is told to come back with the same call once a human has
# acted: confirmation_pending (approve) and insufficient_credits (top up). Replaying the stored error would make
# that retry, with the same Idempotency-Key as SPEC 4.11 asks, fail forever.
IDEMPOTENCY_UNSTORED_CODES = RETRYABLE_CODES | frozenset({"confirmation_pending", "insufficient_credits"})


def idempotency_replayable(code: str | None) -> bool:
    """Whether an outcome (None: success, else its error code) is stored under its Idempotency-Key and
    replayed; the one rule for every door (api.pipeline.execute, the LLM passthrough)."""
    return code is None or code not in IDEMPOTENCY_UNSTORED_CODES


def error_body(exc: DomainError, request_id: str | None) -> dict:
    """The error envelope: {"error": {"code", "message", "request_id", "details"?}}."""
    err: dict = {"code": exc.code, "message": exc.message, "request_id": request_id}
    if exc.details:
        err["details"] = exc.details
    return {"error": err}


def as_domain_error(exc: BaseException, request_id: str | None = None) -> DomainError:
    """Map any exception to a DomainError; unexpected ones become `internal`, logged with the traceback."""
    if isinstance(exc, DomainError):
        return exc
    from django.core.exceptions import PermissionDenied, RequestDataTooBig
    from django.http import Http404
    from rest_framework import exceptions as drf

    if isinstance(exc, Http404 | drf.NotFound):
        return NotFound()
    if isinstance(exc, RequestDataTooBig):
        return PayloadTooLarge()
    if isinstance(exc, drf.UnsupportedMediaType):
        return UnsupportedMediaType()
    if isinstance(exc, drf.MethodNotAllowed):
        return MethodNotAllowed()
    if isinstance(exc, drf.ParseError):
        return InvalidRequest(f"Malformed JSON body: {exc.detail}")
    if isinstance(exc, drf.ValidationError):
        return InvalidRequest(details={"fields": flatten_validation_errors(exc.detail)})
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return Unauthenticated()
    if isinstance(exc, drf.Throttled):
        return RateLimited()
    if isinstance(exc, drf.PermissionDenied | PermissionDenied):
        return InsufficientScope()
    logger.error("unhandled exception (request_id=%s)", request_id, exc_info=(type(exc), exc, exc.__traceback__))
    return Internal()


def flatten_validation_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail -> {"field.path[0].sub": ["message", ...]}."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = prefix if key == "non_field_errors" and prefix else (f"{prefix}.{key}" if prefix else str(key))
            if key == "non_field_errors" and not prefix:
                name = "body"
            for k, v in flatten_validation_errors(value, name).items():
                out.setdefault(k, []).extend(v)
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            out.setdefault(prefix or "body", []).extend(str(item) for item in detail)
        else:
            for i, item in enumerate(detail):
                if not item:
                    continue
                for k, v in flatten_validation_errors(item, f"{prefix}[{i}]").items():
                    out.setdefault(k, []).extend(v)
    else:
        out.setdefault(prefix or "body", []).append(str(detail))
    return out


def current_request_id(request) -> str | None:
    return getattr(request, "request_id", None) or getattr(getattr(request, "_request", None), "request_id", None)


def error_response(exc: BaseException, request=None, request_id: str | None = None) -> JsonResponse:
    rid = request_id or (current_request_id(request) if request is not None else None)
    err = as_domain_error(exc, rid)
    # Serialized exactly as the verb pipeline's errors (core.verbs.dumps): compact, UTF-8, no ASCII escapes.
    response = JsonResponse(error_body(err, rid), status=err.http_status,
                            json_dumps_params={"ensure_ascii": False, "separators": (",", ":")})
    for name, value in err.headers.items():
        response[name] = value
    if rid:
        response["X-Request-Id"] = rid
    return response


def drf_exception_handler(exc, context):
    return error_response(exc, context.get("request"))


# Django's own handlers (config.urls: handler404/handler500 and the 405 path) all render the envelope.
def handler404(request, exception=None):
    return error_response(NotFound(), request)


def handler500(request):
    return error_response(Internal(), request)


def handler400(request, exception=None):
    return error_response(InvalidRequest(), request)


API_PREFIXES = ("/v1/", "/v1", "/mcp", "/openapi.json", "/.well-known/")


def handler403(request, exception=None):
    """The API (/v1, /mcp) answers the envelope; a browser on a page (Django admin as a signed-in member who is
    not staff, the console) gets an HTML 403 page."""
    path = getattr(request, "path", "") or ""
    if path.startswith(API_PREFIXES):
        return error_response(InsufficientScope("Forbidden."), request)
    from django.shortcuts import render

    rid = current_request_id(request)
    response = render(request, "403.html", {"request_id": rid, "is_admin": path.startswith("/admin")}, status=403)
    if rid:
        response["X-Request-Id"] = rid
    return response
