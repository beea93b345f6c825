"""Gateway routes (OpenAI-compatible), included at the site root by reverie_ops/urls.py."""

from django.conf import settings
from django.urls import URLPattern, URLResolver, path

from routing import api, api_async

# Under ASGI (reverie_ops/asgi.py) the async door; under WSGI the sync view.
_view = api_async.chat_completions_async_view if settings.ROUTING_ASYNC_VIEW else api.chat_completions_view

urlpatterns: list[URLPattern | URLResolver] = [
    path("v1/chat/completions", _view, name="routing-chat-completions"),
]
