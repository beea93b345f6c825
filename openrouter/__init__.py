"""The OpenRouter wire, shared by the canary's probes and the gateway's upstream.

Plain Python, no Django: callers pass base URLs, keys, limits and clocks in.

- ``values``: small readers of JSON values (strings, ints, prices, content parts).
- ``jsonbody``: the one JSON decoder and its invalid-UTF-8 policy.
- ``errors``: error objects, error bodies, ``Retry-After``, the exceptions.
- ``sse``: the event-stream splitter (linear time, per-line cap).
- ``chat``: chat bodies and chunks folded into replies (the chunk envelope).
- ``endpoints``: the endpoint listing.
- ``transport``: the httpx layer: pools, first-token/idle/total guards, size caps.
- ``result``: the typed result of one pinned chat call.
- ``client``: the canary's discovery and pinned-chat client.
"""
