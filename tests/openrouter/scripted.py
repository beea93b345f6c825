"""A tiny threaded HTTP server whose replies a test scripts byte by byte, with its own
timing (delays, keep-alives, truncation, resets, huge bodies), and SSE frame builders."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from openrouter.client import OpenRouterClient
from openrouter.result import Call


class ScriptedServer:
    """Threaded TCP server: reads one HTTP request, then runs ``script(sock)``.

    The script writes raw bytes (status line, headers, body) with whatever
    timing it wants; the socket is closed when it returns. Write errors (the
    client hung up) end the script quietly.
    """

    def __init__(self) -> None:
        self.script: Callable[[socket.socket], None] = lambda sock: None
        self.requests: list[bytes] = []
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                try:
                    outer.requests.append(read_request(sock))
                    outer.script(sock)
                except OSError:
                    pass

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def read_request(sock: socket.socket) -> bytes:
    """One HTTP request read off ``sock`` (head and Content-Length body); b"" once it closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return body


SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
COMMENT = b": OPENROUTER PROCESSING\n\n"


def frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def chunk(
    content: str | None = None,
    *,
    finish: str | None = None,
    role: bool = False,
    provider: str = "OpenAI",
    **extra: Any,
) -> dict[str, Any]:
    delta: dict[str, Any] = {"content": content if content is not None else ""}
    if role:
        delta["role"] = "assistant"
    return {
        "id": "gen-1-test",
        "provider": provider,
        "model": "openai/gpt-4o",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
CHAT_PATH = "/api/v1/chat/completions"
MESSAGES = [{"role": "user", "content": "Say hello."}]


def capture(name: str) -> bytes:
    return (CAPTURES / name).read_bytes()


def pinned(client: OpenRouterClient, *, stream: bool, **overrides: Any) -> Call:
    """One pinned call with test-sized limits; keyword overrides win."""
    kwargs: dict[str, Any] = {
        "max_tokens": 64,
        "stream": stream,
        "ttft_limit_s": 5.0,
        "total_timeout_s": 10.0,
    }
    kwargs.update(overrides)
    return client.chat_pinned("openai/gpt-4o", "openai", MESSAGES, **kwargs)


def serve_chat(
    httpserver: HTTPServer,
    body: bytes,
    *,
    status: int = 200,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    httpserver.expect_request(CHAT_PATH, method="POST").respond_with_data(
        body, status=status, content_type=content_type, headers=headers
    )


def serve_sse(httpserver: HTTPServer, body: bytes, headers: dict[str, str] | None = None) -> None:
    serve_chat(httpserver, body, content_type="text/event-stream", headers=headers)


USAGE = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7, "cost": 0.00001}
DONE = b"data: [DONE]\n\n"


def comments_for(sock: socket.socket, seconds: float, every_s: float = 0.2) -> None:
    """Send a keep-alive comment every ``every_s`` for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.sendall(COMMENT)
        time.sleep(every_s)


def json_response(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
    ).encode() + body


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
