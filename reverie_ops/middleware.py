"""The machine-facing paths answer in JSON while the database is down.

Without this, a view that cannot reach PostgreSQL raises ``OperationalError`` (a refused
connection, the connection pool's timeout, a connection dropped mid-query) and Django
answers its HTML 500. The internal API (``/api/``), the gateway (``/v1/``) and ``/metrics``
are called by programs that need a status they can act on: 503 with ``Retry-After``
(RFC 9110 §15.6.4 and RFC 9110 §10.2.3), in each path's own error shape. Pages for people keep Django's handling.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

from routing.responses import error_reply

log = logging.getLogger(__name__)
_MESSAGE = "the database is unavailable; retry after the Retry-After delay"


def database_unavailable_body(path: str) -> dict[str, object] | None:
    """The 503 body for ``path``, in the error shape of the API that serves it, or None
    for paths that are not machine-facing.

    ``/api/`` and ``/metrics`` (whose service token cannot be checked without the
    database): the internal API's shape ``{"error": {"code": 503, "message": ...}}``
    (its OpenAPI document's ``Error`` schema). ``/v1/``: the gateway's routing error,
    failure class ``transient`` (the same request may succeed later).
    """
    if path.startswith("/api/") or path == "/metrics":
        return {"error": {"code": 503, "message": _MESSAGE}}
    if path.startswith("/v1/"):
        # error_reply: the gateway's one error shape, with an operation_id to quote.
        return error_reply(503, "database_unavailable", _MESSAGE, failure_class="transient").body
    return None


class DatabaseUnavailableMiddleware:
    """Turn a view's database outage into a JSON 503 with ``Retry-After`` on ``/api/`` and
    ``/v1/`` (``DATABASE_UNAVAILABLE_RETRY_AFTER_S`` seconds). Other exceptions and other
    paths pass through unchanged."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        body = database_unavailable_body(request.path_info)
        if body is None:
            return None
        log.error("database unavailable on %s %s: %s", request.method, request.path_info, exception)
        response = JsonResponse(body, status=503)
        error = body.get("error")
        if isinstance(error, dict) and "operation_id" in error:
            response["X-Routing-Operation-Id"] = error["operation_id"]
        response["Retry-After"] = str(settings.DATABASE_UNAVAILABLE_RETRY_AFTER_S)
        return response
