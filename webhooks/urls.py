"""Console pages for webhooks (full paths; included by config/urls.py)."""

from django.urls import include, path

from webhooks import console_views as v

console = ([
    path("", v.webhook_list, name="list"),
    path("balance-threshold/", v.balance_threshold, name="balance_threshold"),
    path("deliveries/<str:delivery_id>/replay/", v.delivery_replay, name="replay"),
    path("<str:webhook_id>/", v.webhook_detail, name="detail"),
    path("<str:webhook_id>/<str:action>/", v.webhook_action, name="action"),
], "webhooks_console")

urlpatterns = [path("console/webhooks/", include(console))]
