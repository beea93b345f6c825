"""One request through the whole WSGI stack before a server process accepts work.

Django imports parts of its middleware on the first request that passes through them
(the messages middleware its storage backend, the session middleware its engine's
store, the static files storage its manifest), and the image runs with
``PYTHONDONTWRITEBYTECODE``, so each such module is compiled from source then: the
first gateway request paid ~10 ms for them under gunicorn on a loaded machine
(``bench/warm_start.py``). ``handler_warm`` sends ``GET /favicon.ico`` (a redirect to the
static icon: no database, no Redis, no upstream, no log line) through the application,
so every middleware runs once before the first client does.
"""

from __future__ import annotations

import io
import sys
from typing import Any

from django.conf import settings

from reverie_ops.handlers import WsgiApp

WARM_PATH = "/favicon.ico"


def warm_host(allowed_hosts: list[str]) -> str | None:
    """A Host ``allowed_hosts`` accepts (Django's ``ALLOWED_HOSTS`` rules: ``"*"`` any,
    ``".example.org"`` the domain and its subdomains), or None when the list is empty.
    ``["*"]`` -> ``"localhost"``; ``[".example.org"]`` -> ``"example.org"``."""
    for entry in allowed_hosts:
        if entry == "*":
            return "localhost"
        if entry.lstrip("."):
            return entry.lstrip(".")
    return None


def warm_environ(host: str, *, https: bool, proxy_header: tuple[str, str] | None) -> dict[str, Any]:
    """The WSGI environ of ``GET WARM_PATH`` to ``host``. ``https``: the request is
    seen as secure (else ``SECURE_SSL_REDIRECT`` answers it before the other
    middleware runs); ``proxy_header``: ``SECURE_PROXY_SSL_HEADER`` (its META key and
    secure value), sent as the TLS-terminating proxy would."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET", "PATH_INFO": WARM_PATH, "SCRIPT_NAME": "", "QUERY_STRING": "",
        "SERVER_NAME": host, "SERVER_PORT": "443" if https else "80", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": host, "HTTP_USER_AGENT": "reverie-ops-warm-up",
        "wsgi.version": (1, 0), "wsgi.url_scheme": "https" if https else "http", "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }
    if https and proxy_header is not None:
        environ[proxy_header[0]] = proxy_header[1]
    return environ


def handler_warm(application: WsgiApp) -> str:
    """Send ``GET WARM_PATH`` through ``application`` (the WSGI callable) and read the
    whole response; returns its status line (``"301 Moved Permanently"``), or
    ``"skipped"`` when ``ALLOWED_HOSTS`` is empty (no Host would be accepted). Raises
    what the application raises."""
    host = warm_host(list(settings.ALLOWED_HOSTS))
    if host is None:
        return "skipped"
    status: list[str] = []

    def start_response(line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        status.append(line)

    environ = warm_environ(host, https=bool(settings.SECURE_SSL_REDIRECT), proxy_header=settings.SECURE_PROXY_SSL_HEADER)
    response = application(environ, start_response)
    try:
        for _ in response:
            pass
    finally:
        close = getattr(response, "close", None)
        if close is not None:
            close()  # Django's request_finished: the request's connections go back
    return status[0] if status else "no status"
