from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from billing import topups
from core.errors import DomainError, error_response


@csrf_exempt
@require_POST
def stripe_webhook(request):
    """Stripe calls this; the body is verified against STRIPE_WEBHOOK_SECRET before anything happens."""
    try:
        event = topups.webhook_verify(request.body, request.headers.get("Stripe-Signature"))
        outcome = topups.webhook_handle(event)
    except DomainError as exc:
        return error_response(exc, request)
    return JsonResponse({"received": True, "event_id": event["id"], "outcome": outcome})
