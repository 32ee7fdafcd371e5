"""Console pages for deliverability (full paths; included by config/urls.py)."""

from django.urls import include, path

from deliverability import console_views as v

console = ([
    path("", v.overview, name="overview"),
    path("mailboxes/<str:mailbox_id>/resume/", v.mailbox_resume, name="mailbox_resume"),
    path("domains/<str:domain_id>/resume/", v.domain_resume, name="domain_resume"),
], "deliverability_console")

urlpatterns = [path("console/deliverability/", include(console))]
