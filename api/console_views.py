"""Console actions that run a metered verb for a signed-in member, through the one pipeline (`api.pipeline.execute`):
the same validation, hold, exact settlement and request record as the API, with channel `console`, no API key,
and a rate limit per member. Lives here, above the domain apps, because it composes the pipeline with them."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from accounts.console_views import console_page
from api.pipeline import execute
from core.ids import new_id
from core.ratelimit import hit as ratelimit_hit
from core.verbs import REGISTRY, Context


def run_for_member(request, membership, verb_name: str, body: dict):
    ctx = Context(workspace=membership.workspace, api_key=None, request_id=new_id("req_"), channel="console",
                  rate=ratelimit_hit(f"console:{request.user.pk}"))
    return execute(REGISTRY[verb_name], ctx=ctx, raw=body)


@console_page
@require_POST
def suggest_reply(request, membership, reply_id):
    """"Suggest a reply": draft_reply with the default model; the draft lands in the reply box, nothing is sent."""
    response = run_for_member(request, membership, "draft_reply", {"reply_id": reply_id})
    data = response.data
    if response.status == 404:
        raise Http404
    if response.ok:
        request.session[f"answer-draft-{reply_id}"] = data["result"]["body"]
        messages.success(request, f"Suggested by {data['result']['model']} for {data['service']['credits_charged']} "
                                  "credits. Edit it, then send.")
    else:
        messages.error(request, data["error"]["message"])
    return redirect("replies_pages:conversation", reply_id=reply_id)

