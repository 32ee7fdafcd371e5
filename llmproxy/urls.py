from django.urls import path

from llmproxy import views

urlpatterns = [
    path("v1/llm/chat", views.chat, name="llm-chat"),
    path("v1/llm/chat/completions", views.chat, name="llm-chat-completions"),
    path("v1/llm/models", views.models, name="llm-models"),
    path("v1/llm/models/<path:model_id>", views.model_detail, name="llm-model"),
]
