"""Console pages of the OAuth authorization server: the consent page, and revoking a connection.

The protocol endpoints live in mcpserver.oauth; /oauth/authorize sends the browser here. The signed-in
member sees which client asks (its name, client_id and the redirect URI the answer goes to), picks the
workspace (one where they may create keys) and the scopes (opt-in, off by default), then allows or denies.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import oauth
from accounts.console_views import console_page
from accounts.models import Scope


class _ClientRedirect(HttpResponseRedirect):
    """The client's registered redirect URI may be an app's private-use scheme (RFC 8252)."""

    def __init__(self, url):
        self.allowed_schemes = ["http", "https", urlsplit(url).scheme]
        super().__init__(url)


@never_cache
@console_page
@require_http_methods(["GET", "POST"])
def authorize(request, membership, authorization_id):
    auth = oauth.authorization_pending(authorization_id=authorization_id)
    if auth is None:
        return render(request, "console/oauth_consent.html", {"expired": True}, status=400)
    choices = oauth.consent_workspaces(user=request.user)
    if request.method == "POST":
        if request.POST.get("decision") == "deny":
            return _ClientRedirect(oauth.authorization_deny(auth=auth))
        wanted = request.POST.get("workspace", "")
        chosen = next((m for m in choices if str(m.workspace_id) == wanted), None)
        if chosen is None:
            raise Http404
        scopes = [s for s in request.POST.getlist("scopes") if s in Scope.values]
        return _ClientRedirect(oauth.authorization_approve(auth=auth, user=request.user,
                                                           workspace=chosen.workspace, scopes=scopes))
    client = auth.client
    return render(request, "console/oauth_consent.html", {
        "auth": auth, "client": client, "client_name": client.client_name or urlsplit(client.client_id).hostname,
        "choices": choices, "current": str(membership.workspace_id), "scopes": Scope.choices,
        "requested": set(auth.scopes_requested),
    })


@console_page(approver=True)
@require_POST
def connection_revoke(request, membership, grant_id):
    grant = oauth.grants_for(workspace=membership.workspace).filter(pk=grant_id).first()
    if grant is None:
        raise Http404
    oauth.grant_revoke(grant=grant)
    messages.success(request, f"Connection “{grant.client_name}” revoked. Its tokens now get 401.")
    return redirect("console:keys")
