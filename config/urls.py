import importlib.util

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView, SpectacularSwaggerView

from accounts.console_views import no_passwords
from api.console_views import suggest_reply
from api.views import healthz, readyz, verb_urlpatterns
from core.favicon import favicon

handler400 = "core.errors.handler400"
handler403 = "core.errors.handler403"
handler404 = "core.errors.handler404"
handler500 = "core.errors.handler500"

urlpatterns = [
    path("healthz", healthz),
    path("favicon.ico", favicon),
    path("readyz", readyz),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs", SpectacularSwaggerView.as_view(url_name="openapi"), name="docs"),
    path("docs/redoc", SpectacularRedocView.as_view(url_name="openapi"), name="redoc"),
    path("admin/", admin.site.urls),
    # No passwords anywhere: allauth's password pages (reset, change, set) are not served.
    re_path(r"^console/auth/password/", no_passwords),
    # allauth's URL names (account_login, …) must stay un-namespaced: allauth reverses them itself.
    path("console/auth/", include("allauth.urls")),
    path("console/replies/<str:reply_id>/suggest", suggest_reply, name="console_suggest_reply"),
    path("console/", include("console.urls")),
    path("", RedirectView.as_view(url="/console/", permanent=False)),
]

# An app that serves routes of its own (webhooks, unsubscribe pages, streaming LLM chat) declares them,
# with full paths, in <app>/urls.py.
for _app in ("billing", "leads", "sending", "campaigns", "deliverability", "replies", "llmproxy", "webhooks"):
    if importlib.util.find_spec(f"{_app}.urls"):
        urlpatterns.append(path("", include(f"{_app}.urls")))

# Every verb of the registry, generated (api.views.verb_urlpatterns).
urlpatterns += verb_urlpatterns()
