from django.urls import include, path

from campaigns import console_views, views

console = ([
    path("", console_views.suppression_list, name="suppressions"),
], "campaigns_console")

urlpatterns = [
    path("u/<str:token>", views.unsubscribe, name="campaigns-unsubscribe"),
    path("console/suppressions/", include(console)),
]
