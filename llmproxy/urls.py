from django.urls import path

from llmproxy import views
from llmproxy.openapi import ChatCompletionsDoc, ChatDoc, ModelDoc, ModelsDoc, document


def _wrap(view):
    """A distinct callable per route, so each can carry its own OpenAPI description."""
    async def routed(request, *args, **kwargs):
        return await view(request, *args, **kwargs)
    routed.csrf_exempt = True
    return routed


urlpatterns = [
    path("v1/llm/chat", document(_wrap(views.chat), ChatDoc), name="llm-chat"),
    path("v1/llm/chat/completions", document(_wrap(views.chat), ChatCompletionsDoc), name="llm-chat-completions"),
    path("v1/llm/models", document(_wrap(views.models), ModelsDoc), name="llm-models"),
    path("v1/llm/models/<path:model_id>", document(_wrap(views.model_detail), ModelDoc), name="llm-model"),
]
