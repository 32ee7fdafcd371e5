from django.urls import path

from accounts import console_views as views
from accounts import oauth_views

app_name = "console"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("switch/", views.workspace_switch, name="switch"),
    path("keys/", views.keys, name="keys"),
    path("keys/<uuid:key_id>/revoke/", views.key_revoke, name="key_revoke"),
    path("keys/<uuid:key_id>/answers/", views.key_answers, name="key_answers"),
    path("keys/<uuid:key_id>/limits/", views.key_limits, name="key_limits"),
    path("approvals/", views.approvals, name="approvals"),
    path("approvals/<uuid:token_id>/", views.approval_detail, name="approval"),
    path("ledger/", views.ledger, name="ledger"),
    path("ledger.csv", views.ledger_csv, name="ledger_csv"),
    path("topups/", views.topups, name="topups"),
    path("members/", views.members, name="members"),
    path("members/<int:member_id>/role/", views.member_role, name="member_role"),
    path("members/<int:member_id>/remove/", views.member_remove, name="member_remove"),
    path("invitations/<uuid:invitation_id>/revoke/", views.invitation_revoke, name="invitation_revoke"),
    path("auth/link/<str:token>/", views.signin_link, name="signin_link"),
    path("oauth/authorize/<uuid:authorization_id>/", oauth_views.authorize, name="oauth_authorize"),
    path("connections/<uuid:grant_id>/revoke/", oauth_views.connection_revoke, name="connection_revoke"),
]
