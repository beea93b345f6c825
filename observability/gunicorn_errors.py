"""gunicorn's own error answers in JSON: the requests it refuses before the app sees them.

A request line over ``limit_request_line`` (414), a header over
``limit_request_field_size`` or too many headers (431), a malformed request (400) are
answered by gunicorn itself, in HTML, with the offending header repeated whole. Every
other answer of this app to a program is JSON; these now are too, in the internal API's
error shape ``{"error": {"code": <status>, "message": "..."}}``, the echoed input cut to
``SHOWN_MAX`` characters. Import-light (no Django): it runs in gunicorn's worker.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from gunicorn import util

from core.shown import shown

SHOWN_MAX = 200


def json_error_response(status_int: int, reason: str, mesg: str) -> bytes:
    """The whole HTTP/1.1 response gunicorn writes for an error it answers itself: the
    status line with the status's own reason phrase (gunicorn passes "Bad Request" with
    its 501 for an unknown transfer coding; its ``reason`` stays in the message), and
    ``X-Content-Type-Options: nosniff`` like the app's answers."""
    detail = shown(mesg, SHOWN_MAX)
    message = f"{reason}: {detail}" if detail else reason
    body = json.dumps({"error": {"code": status_int, "message": message}}).encode()
    try:
        phrase = HTTPStatus(status_int).phrase
    except ValueError:
        phrase = reason
    head = (f"HTTP/1.1 {status_int} {phrase}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"X-Content-Type-Options: nosniff\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1", "replace") + body


def _write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    util.write_nonblock(sock, json_error_response(status_int, reason, mesg))


def json_errors_install() -> None:
    """Make this process's gunicorn write its own errors as JSON (it calls
    ``gunicorn.util.write_error``, replaced here; gunicorn has no setting for it)."""
    util.write_error = _write_json_error
