"""Console pages for mailboxes (full paths; included by config/urls.py)."""

from django.urls import include, path

from sending import console_views as v

console = ([
    path("", v.mailbox_list, name="mailboxes"),
    path("add/", v.mailbox_add, name="mailbox_add"),
    path("connect/<str:provider>/", v.mailbox_oauth_start, name="mailbox_oauth_start"),
    path("oauth/callback/", v.mailbox_oauth_callback, name="mailbox_oauth_callback"),
    path("<str:mailbox_id>/reconnect/", v.mailbox_reconnect, name="mailbox_reconnect"),
    path("<str:mailbox_id>/renew/", v.mailbox_renew, name="mailbox_renew"),
    path("<str:mailbox_id>/test/", v.mailbox_test, name="mailbox_test"),
    path("<str:mailbox_id>/remove/", v.mailbox_remove, name="mailbox_remove"),
], "sending_console")

urlpatterns = [path("console/mailboxes/", include(console))]
