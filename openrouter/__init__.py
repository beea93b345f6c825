"""The OpenRouter wire, shared by discovery, the canary's probes and the gateway's upstream.

Plain Python, no Django: callers pass base URLs, keys, limits, clocks and the proxy rule
in. HTTP itself is httpx's (httpcore underneath): the sync client for discovery and the
gateway (threads under gunicorn gthread, Celery's task threads), the async client on one
event loop per process for the probes' streams. Every module, in the order they build:

Reading what arrives (pure):
- ``values``: small readers of JSON values (strings, ints, prices, content parts).
- ``jsonbody``: the one JSON decoder, its invalid-UTF-8 policy, ``TooLargeError``.
- ``errors``: error objects, error bodies, ``Retry-After``, the exceptions.
- ``sse``: the event-stream splitter (linear time, per-line cap).
- ``chat``: chat bodies and chunks folded into replies (the chunk envelope).
- ``endpoints``: the endpoint listing.
- ``codings``: gzip/deflate bodies decoded in bounded steps (a gzip bomb meets the cap).

Sending and guarding (httpx):
- ``egress``: which proxy a request leaves through (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY,
  NO_PROXY) and the transports that route each origin through it.
- ``transport``: pools, size caps, the first-token/idle/total guards, the watchdog and
  the attempt handle a deadline or hedging cuts.
- ``watched``: the gateway's sync transport, whose sockets a cut reaches before the headers.

One pinned chat call (the canary's side; the gateway's is ``routing.gateway.upstream``):
- ``result``: the typed result of one pinned chat call (``Call``).
- ``streamcall``: one streamed reply folded into a ``Call``, whichever client read it.
- ``client``: discovery, generation lookups and pinned chats on httpx's sync client.
- ``aiochat``: the same client whose streamed chats run on the process's event loop
  (``aiohttp.ClientSession``: lighter per stream in a round's burst), the probes' wire.
"""
