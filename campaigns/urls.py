from django.urls import include, path

from campaigns import console_campaigns, console_views, views

console = ([
    path("", console_views.suppression_list, name="suppressions"),
], "campaigns_console")

pages = ([
    path("", console_campaigns.campaign_list, name="list"),
    path("new", console_campaigns.campaign_new, name="new"),
    path("<uuid:campaign_id>/", console_campaigns.campaign_detail, name="detail"),
    path("<uuid:campaign_id>/pause", console_campaigns.campaign_pause, name="pause"),
    path("<uuid:campaign_id>/resume", console_campaigns.campaign_resume, name="resume"),
], "campaigns_pages")

urlpatterns = [
    path("u/<str:token>", views.unsubscribe, name="campaigns-unsubscribe"),
    path("console/suppressions/", include(console)),
    path("console/campaigns/", include(pages)),
]
