"""gunicorn's own answers to requests it refuses (414 long request line, 431 long header)
are JSON with the input cut, not HTML repeating it: the shipped gunicorn settings
(observability/gunicorn_conf.py) on a real gunicorn process over real HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from fake_openrouter.process import free_port
from observability.gunicorn_errors import json_error_response
from tests.celery.conftest import ROOT


@pytest.fixture(scope="module")
def gunicorn_base() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "gunicorn", "reverie_ops.wsgi", "-c", "observability/gunicorn_conf.py", "-w", "1",
         "-b", f"127.0.0.1:{port}"],
        # No database is set up for this module: the worker's warm start finds none, and
        # with the pool's timeout as docker-compose.yml ships it for web (1 s) it says so
        # at once instead of waiting 30 s, twice, before it accepts.
        cwd=ROOT, env={**os.environ, "DJANGO_DEBUG": "true", "DATABASE_POOL_TIMEOUT_S": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        # The worker builds the judges before it accepts (warm start): tens of seconds on a
        # loaded machine.
        deadline = time.monotonic() + 180
        while True:
            try:
                httpx.get(base + "/api/v1/openapi.json", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "gunicorn did not answer within 180 s"
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


def _raw(base: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20_000 + b"\r\n\r\n", 431),
])
def test_gunicorns_own_refusals_are_json_and_do_not_echo_the_input(gunicorn_base, request_bytes, status):
    code, headers, body = _raw(gunicorn_base, request_bytes)
    assert code == status
    assert headers["content-type"] == "application/json" and headers["x-content-type-options"] == "nosniff"
    assert len(body) < 1_000
    error = json.loads(body)["error"]
    assert error["code"] == status and len(error["message"]) < 300


def test_the_status_line_says_the_status_s_own_phrase_and_the_message_keeps_gunicorn_s():
    # gunicorn answers an unknown transfer coding 501 with the reason "Bad Request".
    head, _, body = json_error_response(501, "Bad Request", "Unsupported transfer coding: 'banana'").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501 Not Implemented\r\n")
    assert json.loads(body)["error"]["message"] == "Bad Request: Unsupported transfer coding: 'banana'"
