from django.urls import include, path

from accounts import console_views as views

app_name = "console"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("approvals/<uuid:token_id>/", views.approval_detail, name="approval"),
    path("auth/", include("allauth.urls")),
]
