"""The Celery worker's metrics listener: the Prometheus exposition behind a bearer token.

prometheus-client's ``start_http_server`` answers anyone who can reach it, and the worker
bound it to 0.0.0.0. This listener serves the same WSGI app (``make_wsgi_app``) on a
threaded ``wsgiref`` server, by default on loopback, and answers only a request whose
``Authorization: Bearer <token>`` passes ``verify`` (the web app's service tokens, so one
scrape token serves ``/metrics`` and the workers): 401 otherwise, 503 when the token
cannot be checked (the database is down).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

log = logging.getLogger(__name__)

Verify = Callable[[str | None], bool]
StartResponse = Callable[..., Any]


class TokenUnverifiable(Exception):
    """The token could not be checked (its store is down): answered 503."""


def token_guarded(app: Callable[..., Iterable[bytes]], verify: Verify) -> Callable[..., Iterable[bytes]]:
    """``app`` answering only requests whose ``Authorization`` header ``verify`` accepts
    (401 with ``WWW-Authenticate`` otherwise; 503 when ``verify`` raises
    ``TokenUnverifiable``)."""

    def guarded(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            allowed = verify(environ.get("HTTP_AUTHORIZATION"))
        except TokenUnverifiable as exc:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain"), ("Retry-After", "5")])
            return [f"the token cannot be checked now: {exc}\n".encode()]
        if not allowed:
            start_response("401 Unauthorized", [("Content-Type", "text/plain"), ("WWW-Authenticate", 'Bearer realm="metrics"')])
            return [b"a valid service token is required: Authorization: Bearer <token>\n"]
        return app(environ, start_response)

    return guarded


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass


def metrics_listener_start(addr: str, port: int, registry: CollectorRegistry, verify: Verify) -> WSGIServer:
    """Serve ``registry`` on ``addr``:``port`` behind ``verify`` from a daemon thread;
    returns the server (``shutdown()`` stops it). Raises ``OSError`` when the address
    cannot be bound."""
    server = make_server(addr, port, token_guarded(make_wsgi_app(registry), verify),
                         server_class=_ThreadingServer, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True).start()
    return server
