"""Console pages for mailboxes (full paths; included by config/urls.py)."""

from django.urls import include, path

from sending import console_views as v

console = ([
    path("", v.mailbox_list, name="mailboxes"),
    path("add/", v.mailbox_add, name="mailbox_add"),
    path("<str:mailbox_id>/renew/", v.mailbox_renew, name="mailbox_renew"),
    path("<str:mailbox_id>/test/", v.mailbox_test, name="mailbox_test"),
    path("<str:mailbox_id>/remove/", v.mailbox_remove, name="mailbox_remove"),
], "sending_console")

urlpatterns = [path("console/mailboxes/", include(console))]
