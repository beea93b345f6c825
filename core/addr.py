"""Is an address free to listen on? The demo's check, before it touches anything.

``python -m core.addr HOST:PORT`` exits 0 when it is, else prints one line saying
what is wrong and exits 1: ``make demo`` runs it before it replaces the demo's database,
so a second ``make demo`` on a busy address leaves the running demo's data alone.
"""

from __future__ import annotations

import socket
import sys

HINT = "make demo DEMO_ADDR=127.0.0.1:8001"


def addr_problem(addr: str) -> str | None:
    """None when ``host:port`` can be listened on now, else why not (one line)."""
    host, _, port_text = addr.rpartition(":")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return f"the address must be host:port, e.g. 127.0.0.1:8000, got {addr!r}"
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host.strip("[]"), int(port_text)))
        except OSError as exc:
            return f"cannot serve the web app on {addr}: {exc.strerror}. Stop what runs there, or choose another address: {HINT}"
    return None


if __name__ == "__main__":
    problem = addr_problem(sys.argv[1] if len(sys.argv) > 1 else "")
    if problem:
        sys.stderr.write(f"error: {problem}\n")
        sys.exit(1)
