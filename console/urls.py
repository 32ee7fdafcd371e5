"""The console's URL map (namespace `console`, mounted at /console/ by config.urls): each page from the app that
owns it. Pages with routes of their own elsewhere (campaigns, sending, replies, webhooks, …) declare them in
<app>/urls.py."""

from django.urls import path

from accounts import console_views as accounts_views
from accounts import oauth_views
from billing import console_views as billing_views
from console import views

app_name = "console"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("switch/", accounts_views.workspace_switch, name="switch"),
    path("keys/", views.keys, name="keys"),
    path("keys/<uuid:key_id>/revoke/", accounts_views.key_revoke, name="key_revoke"),
    path("keys/<uuid:key_id>/answers/", accounts_views.key_answers, name="key_answers"),
    path("keys/<uuid:key_id>/limits/", billing_views.key_limits, name="key_limits"),
    path("approvals/", views.approvals, name="approvals"),
    path("approvals/<uuid:token_id>/", views.approval_detail, name="approval"),
    path("ledger/", billing_views.ledger, name="ledger"),
    path("ledger.csv", billing_views.ledger_csv, name="ledger_csv"),
    path("topups/", billing_views.topups, name="topups"),
    path("members/", accounts_views.members, name="members"),
    path("members/<int:member_id>/role/", accounts_views.member_role, name="member_role"),
    path("members/<int:member_id>/remove/", accounts_views.member_remove, name="member_remove"),
    path("invitations/<uuid:invitation_id>/revoke/", accounts_views.invitation_revoke, name="invitation_revoke"),
    path("auth/link/<str:token>/", accounts_views.signin_link, name="signin_link"),
    path("oauth/authorize/<uuid:authorization_id>/", oauth_views.authorize, name="oauth_authorize"),
    path("connections/<uuid:grant_id>/revoke/", oauth_views.connection_revoke, name="connection_revoke"),
]
