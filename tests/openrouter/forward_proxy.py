"""A real forwarding HTTP proxy on loopback, small enough to read: what a corporate or
cluster egress proxy does for our clients.

- ``http://`` targets arrive in absolute form (``POST http://host:port/path HTTP/1.1``,
  RFC 9112 section 3.2.2): the request line is rewritten to origin form and the bytes are
  relayed both ways on a connection to the target;
- ``CONNECT host:port`` opens a tunnel (RFC 9110 section 9.3.6) for ``https://`` targets.

``seen`` lists each request line it was sent (the proof a request went through it);
``connections`` counts the client connections it accepted; ``refuse`` answers every
request with 403 instead (an egress that blocks the host).
"""

from __future__ import annotations

import socket
import socketserver
import threading
from urllib.parse import urlsplit


class ForwardProxy:
    def __init__(self) -> None:
        self.seen: list[str] = []
        self.connections = 0
        self.refuse = False
        lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with lock:
                    outer.connections += 1
                outer._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        target: tuple[str, int] | None = None
        buffered = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffered:
                    data = client.recv(65536)
                    if not data:
                        return
                    buffered += data
                head, _, rest = buffered.partition(b"\r\n\r\n")
                line, _, fields = head.partition(b"\r\n")
                method, uri, version = line.decode("latin-1").split(" ", 2)
                self.seen.append(f"{method} {uri}")
                if self.refuse:
                    client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    return
                if method == "CONNECT":
                    host, _, port = uri.rpartition(":")
                    upstream = socket.create_connection((host, int(port)), timeout=10)
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    _relay(client, upstream, rest)
                    return
                url = urlsplit(uri)
                where = (url.hostname or "", url.port or 80)
                if upstream is None or where != target:
                    if upstream is not None:
                        upstream.close()
                    upstream = socket.create_connection(where, timeout=10)
                    target = where
                    threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
                path = url.path + (f"?{url.query}" if url.query else "")
                length = _content_length(fields)
                while len(rest) < length:
                    data = client.recv(65536)
                    if not data:
                        return
                    rest += data
                upstream.sendall(f"{method} {path} {version}\r\n".encode("latin-1") + fields + b"\r\n\r\n" + rest[:length])
                buffered = rest[length:]
        except OSError:
            return
        finally:
            if upstream is not None:
                upstream.close()
            client.close()


def _content_length(fields: bytes) -> int:
    for field in fields.split(b"\r\n"):
        name, _, value = field.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _relay(client: socket.socket, upstream: socket.socket, first: bytes) -> None:
    if first:
        upstream.sendall(first)
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join(timeout=30)
