"""The WSGI application's two Django handlers (``reverie_ops.handlers``): which middleware
the gateway's paths pass, and which handler a path reaches."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

from reverie_ops.handlers import GatewayHandler, wsgi_application
from reverie_ops.warm_request import warm_environ

# What the gateway's callers (programs with a bearer token) have no use for. A middleware
# added to MIDDLEWARE must be put in GATEWAY_MIDDLEWARE or here: a decision, not a default.
BROWSER_ONLY = {
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
}


def test_the_gateway_middleware_is_the_whole_stack_in_order_without_the_browser_part() -> None:
    assert [m for m in settings.MIDDLEWARE if m not in BROWSER_ONLY] == settings.GATEWAY_MIDDLEWARE


def test_building_the_gateway_handler_leaves_the_settings_as_they_were() -> None:
    before = list(settings.MIDDLEWARE)
    handler = GatewayHandler()
    assert settings.MIDDLEWARE == before
    # The chain it built: CSRF's view hook is the whole stack's, not the gateway's.
    assert _hooks(WSGIHandler(), "view") == {"CsrfViewMiddleware"}
    assert _hooks(handler, "view") == set()
    assert _hooks(handler, "exception") == {"DatabaseUnavailableMiddleware"}


def _hooks(handler: WSGIHandler, kind: str) -> set[str]:
    """The middlewares whose ``process_<kind>`` hook ``handler`` registered."""
    return {type(hook.__self__).__name__ for hook in getattr(handler, f"_{kind}_middleware")}


def _get(app: Any, path: str) -> tuple[str, dict[str, str]]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = status, dict(headers)

    environ = {**warm_environ("localhost", https=False, proxy_header=None), "PATH_INFO": path}
    body = app(environ, start_response)
    b"".join(body)
    getattr(body, "close", lambda: None)()
    return seen["status"], seen["headers"]


@pytest.mark.django_db  # Django's request signals look at the connection an earlier test left
def test_a_path_reaches_the_handler_of_its_prefix(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["localhost"]
    app = wsgi_application()
    status, headers = _get(app, "/v1/chat/completions")  # a GET: the view's 405, no database
    assert status.startswith("405") and "X-Frame-Options" not in headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers = _get(app, "/v1x/nothing")  # not under /v1/: Django's page, the whole stack
    assert status.startswith("404") and headers["X-Frame-Options"] == "DENY"
