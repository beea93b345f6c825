"""Open the gateway's first upstream connection before a server process accepts work.

A gateway request that finds no idle connection in the pool pays for one on its own path:
DNS, TCP, and for OpenRouter the TLS handshake (through the egress proxy's CONNECT tunnel
when one is configured). ``preconnect`` sends one cheap request through the gateway's own
transport, so the connection it opens stays in that pool, keyed as the gateway's chat
requests will look for it (same origin, same proxy).

The request is OpenRouter's ``GET /api/v1/key`` ("Get current API key",
docs/sources/openrouter-api.md): authenticated, a small JSON body, nothing billed. Its
status does not matter (a 401 keeps the connection as well as a 200); only a body read to
its end returns the connection to the pool. The connection then serves the first chat
request if that comes within the pool's keep-alive expiry (``openrouter.watched``, 5 s
idle, as httpx); a process idle longer opens a new one on its first request, as after
any idle pause.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

PRECONNECT_PATH = "/key"
# A key's record is a few hundred bytes; a body past this is not one, and is not read.
MAX_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Preconnected:
    """What one warm-up request did: ``url`` requested, ``outcome`` (``"HTTP 200"``, or
    the exception's type and message when no response came), ``kept`` (its connection
    went back to the pool: the whole body was read), ``ms`` from send to end."""

    url: str
    outcome: str
    kept: bool
    ms: float

    def describe(self) -> str:
        """One line for the log: ``GET https://.../key: HTTP 200 in 43 ms, connection kept``."""
        kept = "connection kept" if self.kept else "no connection kept"
        return f"GET {self.url}: {self.outcome} in {self.ms:.0f} ms, {kept}"


def preconnect(transport: httpx.BaseTransport, base_url: str, headers: dict[str, str], timeout_s: float,
               clock: Callable[[], float] = time.monotonic) -> Preconnected:
    """Send ``GET {base_url}/key`` with ``headers`` through ``transport`` (the gateway's,
    so its connection lands in the gateway's pool) and read the body to its end, within
    ``timeout_s`` seconds in all (connect, TLS, proxy tunnel, headers and body; a body
    past ``MAX_BODY_BYTES`` or the time is abandoned, its connection dropped). Never
    raises on what the network or the upstream does; raises ``httpx.InvalidURL`` for a
    malformed ``base_url``."""
    url = httpx.URL(base_url.rstrip("/") + PRECONNECT_PATH)
    start = clock()
    end = start + timeout_s
    request = httpx.Request("GET", url, headers=headers, extensions={
        "timeout": {"connect": timeout_s, "read": timeout_s, "write": timeout_s, "pool": timeout_s}})

    def done(outcome: str, kept: bool) -> Preconnected:
        return Preconnected(str(url), outcome, kept, (clock() - start) * 1000.0)

    try:
        response = transport.handle_request(request)
    except httpx.HTTPError as exc:
        return done(f"{type(exc).__name__}: {exc}", False)
    try:
        size = 0
        for chunk in response.iter_raw():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return done(f"HTTP {response.status_code}, a body over {MAX_BODY_BYTES} bytes", False)
            if clock() > end:
                return done(f"HTTP {response.status_code}, its body not read within {timeout_s:g} s", False)
    except httpx.HTTPError as exc:
        return done(f"HTTP {response.status_code}, body cut: {type(exc).__name__}: {exc}", False)
    finally:
        response.close()
    # A server that said it closes the connection after this response keeps none.
    kept = response.headers.get("connection", "").lower() != "close"
    return done(f"HTTP {response.status_code}", kept)
