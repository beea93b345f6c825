"""A hostile OpenAI-compatible upstream on loopback: the mode is the pinned provider
(``provider.only[0]``'s slug), so one server serves a healthy route and hostile ones.

Modes: ``good`` (a short healthy stream), ``down`` (HTTP 503), ``huge_stream`` (content deltas without end,
``size`` bytes), ``huge_line`` (one SSE line of ``size`` bytes, no newline), ``keepalive``
(SSE comment lines forever, never content), ``slow`` (one byte a second), ``bad_utf8``
(content bytes that are not UTF-8), ``bomb`` (a frame of JSON nested 100,000 deep),
``surrogate`` (content with a lone surrogate escape, ``\\ud800``), ``surrogate_whole`` (the
same in a whole ``application/json`` body), ``surrogate_pair`` (an emoji's surrogate pair
split across two chunks: valid text once joined), ``nul`` (content holding U+0000: valid
text that PostgreSQL's jsonb refuses to store).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {"id": "gen-1", "object": "chat.completion.chunk", "model": "acme/chat-1",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


class Hostile:
    """``Hostile(size=N)`` serves on ``base_url`` (ends in ``/api/v1``) until ``close()``;
    ``served[mode]`` counts requests per mode; ``sent[mode]`` bytes written."""

    def __init__(self, *, size: int = 8 << 20) -> None:
        self.size = size
        self.served: dict[str, int] = {}
        self.sent: dict[str, int] = {}
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                only = (body.get("provider") or {}).get("only") or ["good/x"]
                mode = str(only[0]).split("/")[0]
                owner.served[mode] = owner.served.get(mode, 0) + 1
                if mode == "down":
                    error = json.dumps({"error": {"code": 503, "message": "upstream overloaded"}}).encode()
                    self.send_response(503)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(error)))
                    self.end_headers()
                    self.wfile.write(error)
                    return
                if mode == "surrogate_whole":
                    whole = (b'{"id": "gen-1", "object": "chat.completion", "model": "acme/chat-1", "choices": [{"index": 0, '
                             b'"message": {"role": "assistant", "content": "Hello \\ud800 traveller."}, "finish_reason": "stop"}]}')
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(whole)))
                    self.end_headers()
                    self.wfile.write(whole)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    getattr(owner, f"_{mode}")(self, mode)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the gateway hung up: what it should do
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()

    def _write(self, h: BaseHTTPRequestHandler, mode: str, data: bytes) -> None:
        h.wfile.write(data)
        self.sent[mode] = self.sent.get(mode, 0) + len(data)

    def _good(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        self._write(h, mode, _frame({"role": "assistant", "content": "Hello, traveller."}))
        self._write(h, mode, _frame({}, "stop"))
        self._write(h, mode, b"data: [DONE]\n\n")
        h.wfile.flush()

    def _huge_stream(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        frame = _frame({"content": "x" * 16000})
        while self.sent.get(mode, 0) < self.size and not self.stop.is_set():
            self._write(h, mode, frame)
        self._write(h, mode, _frame({}, "stop") + b"data: [DONE]\n\n")

    def _huge_line(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        self._write(h, mode, b'data: {"choices": [{"index": 0, "delta": {"content": "')
        block = b"y" * 65536
        while self.sent.get(mode, 0) < self.size and not self.stop.is_set():
            self._write(h, mode, block)
        self._write(h, mode, b'"}}]}\n\n')

    def _keepalive(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        while not self.stop.is_set():
            self._write(h, mode, b": OPENROUTER PROCESSING\n\n")
            h.wfile.flush()
            time.sleep(0.05)

    def _slow(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        for byte in _frame({"role": "assistant", "content": "Hello"}):
            if self.stop.is_set():
                return
            self._write(h, mode, bytes([byte]))
            h.wfile.flush()
            time.sleep(1.0)

    def _bad_utf8(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        good = _frame({"role": "assistant", "content": "Hello ZZ"})
        self._write(h, mode, good.replace(b"ZZ", b"\xff\xfe\xc3"))
        self._write(h, mode, _frame({}, "stop") + b"data: [DONE]\n\n")

    def _surrogate(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        # json.dumps spells a lone surrogate as the escape \ud800, as a host's encoder would.
        self._write(h, mode, _frame({"role": "assistant", "content": "Hello \ud800 traveller."}))
        self._write(h, mode, _frame({}, "stop") + b"data: [DONE]\n\n")

    def _surrogate_pair(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        self._write(h, mode, _frame({"role": "assistant", "content": "Hello \ud83d"}))
        self._write(h, mode, _frame({"content": "\ude00 traveller."}))
        self._write(h, mode, _frame({}, "stop") + b"data: [DONE]\n\n")

    def _nul(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        self._write(h, mode, _frame({"role": "assistant", "content": "Hello \u0000 traveller."}))
        self._write(h, mode, _frame({}, "stop") + b"data: [DONE]\n\n")

    def _bomb(self, h: BaseHTTPRequestHandler, mode: str) -> None:
        depth = 100_000
        self._write(h, mode, b"data: " + b"[" * depth + b"]" * depth + b"\n\n")
        self._write(h, mode, b"data: [DONE]\n\n")
