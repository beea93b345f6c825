"""A real TCP front on loopback that counts the connections it accepts and relays each
to a target port, terminating TLS first when given a server context (what a load
balancer or OpenRouter's edge is to the gateway): the proof of how many connections, and
TLS handshakes, a client opened."""

from __future__ import annotations

import selectors
import socket
import socketserver
import ssl
import threading


class CountingFront:
    """Listens on ``url`` (``http://`` or, with ``tls``, ``https://127.0.0.1:PORT``);
    ``connections`` counts the accepted ones (with TLS, those whose handshake completed)."""

    def __init__(self, target_port: int, tls: ssl.SSLContext | None = None) -> None:
        self.connections = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve(self.request, target_port, tls)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _serve(self, client: socket.socket, target_port: int, tls: ssl.SSLContext | None) -> None:
        try:
            if tls is not None:
                client = tls.wrap_socket(client, server_side=True)
            with self._lock:
                self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", target_port), timeout=30)
        except OSError:
            client.close()
            return
        try:
            _relay(client, upstream)
        finally:
            upstream.close()
            client.close()


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Bytes both ways, in one thread (an SSL socket is not to be read and written from
    two), until either side closes or 30 s pass in silence."""
    selector = selectors.DefaultSelector()
    selector.register(client, selectors.EVENT_READ, upstream)
    selector.register(upstream, selectors.EVENT_READ, client)
    try:
        while True:
            ready = selector.select(timeout=30)
            if not ready:
                return
            for key, _ in ready:
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                while True:
                    data = source.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
                    # Bytes OpenSSL already decrypted are not the selector's to see.
                    if not isinstance(source, ssl.SSLSocket) or not source.pending():
                        break
    except OSError:
        return
    finally:
        selector.close()
