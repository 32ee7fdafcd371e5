"""Unsubscribe pages (CONTRACT section 5). GET shows a confirmation page and changes nothing (mail scanners
follow links); POST unsubscribes at once, including RFC 8058 one-click (`List-Unsubscribe=One-Click`)."""

from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from campaigns import services
from campaigns.messages import unsubscribe_lead_pk
from campaigns.models import CampaignLead
from core import errors


@csrf_exempt  # RFC 8058 one-click POSTs come from mail providers without a cookie; the signed token authorizes
def unsubscribe(request, token: str):
    if request.method not in ("GET", "HEAD", "POST"):
        return errors.error_response(errors.MethodNotAllowed(headers={"Allow": "GET, HEAD, POST"}), request)
    pk = unsubscribe_lead_pk(token)
    lead = CampaignLead.objects.filter(pk=pk).first() if pk else None
    if lead is None:
        return errors.error_response(errors.NotFound("This unsubscribe link is not valid."), request)
    if request.method == "POST":
        services.unsubscribe_by_token(token=token, source="one-click" if b"One-Click" in request.body else "link")
        response = render(request, "campaigns/unsubscribed.html", {"email": lead.email}, status=200)
    else:
        response = render(request, "campaigns/unsubscribe.html", {"email": lead.email, "token": token})
    response["Cache-Control"] = "no-store"
    response["X-Robots-Tag"] = "noindex"
    return response
