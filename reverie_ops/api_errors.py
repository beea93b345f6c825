"""Django's error handlers (``handler400``/``handler404``/``handler500`` of the root URLconf)
for the machine-facing paths: the gateway (``/v1/``) and the internal API (``/api/v1/``)
answer an unknown path, a refused Host or a crash in their own JSON error shape, as they
answer everything else; a program reading ``error.message`` is not handed an HTML page.
Other paths (the admin, the site root) keep Django's pages. With ``DJANGO_DEBUG`` on (the
demo) Django shows its debug pages instead of calling the handlers (Django docs,
"Customizing error views"), so ``ApiPathErrorsMiddleware`` answers the two cases a client
meets, an unknown path and a refused Host, before Django gets there, in either mode.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults

from canary.api import api_error
from routing.responses import error_reply

# Django logs a refused Host here (its "django.security.DisallowedHost" logger); so do we.
_security_log = logging.getLogger("django.security.DisallowedHost")
_GATEWAY = "/v1/"
_API = "/api/v1/"
_STATUS_CODE = {400: "bad_request", 404: "not_found", 500: "internal_error"}


def _resolves(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True


def api_error_response(path: str, status: int, message: str, *, header: str | None = None) -> JsonResponse | None:
    """The JSON answer for ``path`` in the shape of the API that serves it: the gateway's
    routing error (``error.code`` a name, an ``operation_id`` to quote, ``error.header``
    naming ``header`` when given, its headers) under ``/v1/``, the internal API's
    ``{"error": {"code": <status>, "message": ...}}`` under ``/api/v1/``; None for any
    other path (Django's own page is kept). Carries its Content-Length: the middleware
    answers before CommonMiddleware, which counts the others."""
    if path.startswith(_GATEWAY) or path == _GATEWAY.rstrip("/"):
        failure = "transient" if status >= 500 else "permanent"
        extra = {"header": header} if header else {}
        reply = error_reply(status, _STATUS_CODE.get(status, "error"), message, failure_class=failure, **extra)
        response = JsonResponse(reply.body, status=status, json_dumps_params={"ensure_ascii": False})
        for name, value in reply.headers.items():
            response[name] = value
    elif path.startswith(_API) or path == _API.rstrip("/"):
        response = api_error(status, message)
    else:
        return None
    response["Content-Length"] = str(len(response.content))
    return response


def not_found_message(path: str) -> str:
    """``no such path: /v1/models``, with the path without its trailing slash when that
    one exists (``/v1/chat/completions/``: the gateway's paths end without a slash)."""
    message = f"no such path: {path}"
    if path.endswith("/") and len(path) > 1 and _resolves(path.rstrip("/")):
        message += f"; did you mean {path.rstrip('/')} (without the trailing slash)?"
    return message


_HOST_MESSAGE = "bad request: the Host header names a host this server does not answer for (ALLOWED_HOSTS)"


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404 for an unknown path: JSON under /v1/ and /api/v1/ (the path named)."""
    return api_error_response(request.path_info, 404, not_found_message(request.path_info)) or defaults.page_not_found(request, exception)


def handler400(request: HttpRequest, exception: Exception) -> HttpResponse:
    """400 for a request Django refuses before any view (a Host outside ALLOWED_HOSTS, a
    malformed multipart body): JSON under /v1/ and /api/v1/. The Host is not repeated:
    it is the client's input and the log (django.security) has it."""
    if isinstance(exception, DisallowedHost):
        return api_error_response(request.path_info, 400, _HOST_MESSAGE, header="Host") \
            or defaults.bad_request(request, exception)
    return api_error_response(request.path_info, 400, "bad request") or defaults.bad_request(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    """500 for an unhandled error in a view: JSON under /v1/ and /api/v1/ (the traceback
    is logged, never sent)."""
    return api_error_response(request.path_info, 500, "internal server error; the server logged it") \
        or defaults.server_error(request)


class ApiPathErrorsMiddleware:
    """Under /v1/ and /api/v1/, a Host outside ALLOWED_HOSTS is a JSON 400 naming the Host
    header and a path no route matches a JSON 404 (``api_error_response``) before the
    middleware after it or Django's DEBUG pages see the request. Second in MIDDLEWARE,
    after SecurityMiddleware only, whose headers (nosniff, Referrer-Policy) its answers
    carry like every other. Other paths pass through."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if not (path.startswith((_GATEWAY, _API)) or path in (_GATEWAY.rstrip("/"), _API.rstrip("/"))):
            return self.get_response(request)
        try:
            request.get_host()
        except DisallowedHost as exc:
            _security_log.error("%s", exc)
            return api_error_response(path, 400, _HOST_MESSAGE, header="Host") or self.get_response(request)
        if not _resolves(path):
            return api_error_response(path, 404, not_found_message(path)) or self.get_response(request)
        return self.get_response(request)
