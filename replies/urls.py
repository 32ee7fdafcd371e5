from django.urls import include, path

from replies import console_views

pages = ([
    path("", console_views.inbox, name="inbox"),
    path("export.jsonl", console_views.export, name="export"),
    path("notify", console_views.notify, name="notify"),
    path("<str:reply_id>/correct", console_views.correct, name="correct"),
    path("<str:reply_id>/", console_views.conversation, name="conversation"),
    path("<str:reply_id>/answer", console_views.answer, name="answer"),
], "replies_pages")

urlpatterns = [
    path("console/replies/", include(pages)),
]
