"""The web app's WSGI application: the gateway's paths through the middleware a program's
request needs, every other path through the whole stack.

A request under ``/v1/`` comes from a program with a bearer token: no session, cookie,
CSRF token, flash message, static file or frame rule applies to it, and those
middlewares cost each gateway request about 0.25 ms one at a time under gunicorn
(docs/benchmarks.md, "The gateway's own middleware"). So ``/v1/`` is served by a second
Django handler built from ``settings.GATEWAY_MIDDLEWARE`` (an ordered subset of
``settings.MIDDLEWARE``: the JSON error paths, the security headers, Content-Length and
the database-outage 503), and everything else (the admin, dashboards, the internal API
``/api/v1/``) by Django's handler with ``settings.MIDDLEWARE``. Both answer through the
same URLconf, views and signals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import django
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

GATEWAY_PREFIX = "/v1/"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class GatewayHandler(WSGIHandler):
    """Django's WSGI handler with ``settings.GATEWAY_MIDDLEWARE`` as its middleware chain.

    Django builds a handler's chain from ``settings.MIDDLEWARE`` alone
    (``BaseHandler.load_middleware``); the list is swapped in for that one call, made
    while the handler is constructed, as a server builds its application and before it
    serves (nothing else reads the list after start-up)."""

    def load_middleware(self, is_async: bool = False) -> None:
        whole = settings.MIDDLEWARE
        settings.MIDDLEWARE = list(settings.GATEWAY_MIDDLEWARE)
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = whole


def wsgi_application() -> WsgiApp:
    """The WSGI callable: ``PATH_INFO`` under ``GATEWAY_PREFIX`` to a ``GatewayHandler``,
    anything else to Django's ``WSGIHandler``. Sets Django up first, as
    ``django.core.wsgi.get_wsgi_application`` does (``DJANGO_SETTINGS_MODULE`` must be
    set)."""
    django.setup(set_prefix=False)
    whole = WSGIHandler()
    gateway = GatewayHandler()

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        handler = gateway if environ.get("PATH_INFO", "").startswith(GATEWAY_PREFIX) else whole
        return handler(environ, start_response)

    return application
