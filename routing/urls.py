"""Gateway routes (OpenAI-compatible), included at the site root by reverie_ops/urls.py."""

from django.urls import URLPattern, URLResolver, path

from routing import api

urlpatterns: list[URLPattern | URLResolver] = [
    path("v1/chat/completions", api.chat_completions_view, name="routing-chat-completions"),
]
