"""A tiny threaded HTTP server whose replies a test scripts byte by byte, with its own
timing (delays, keep-alives, truncation, resets, huge bodies), and SSE frame builders."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Callable
from typing import Any


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
                    outer.requests.append(_read_request(sock))
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


def _read_request(sock: socket.socket) -> bytes:
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


