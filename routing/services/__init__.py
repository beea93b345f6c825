"""Routing services: the only writers of routing rows, and the process's gateway.

Imports run one way, top to bottom, never back up (an import-linter contract):

- ``chat``: ``chat_completion_create``, the in-process client (the API view calls it too);
- ``wiring``: the process's gateway (``gateway_get``, ``_warm``, ``upstream_warm``, ``_flush``, ``_reset``),
  its breaker store and the event-sink wrappers registered by apps above routing;
- ``ledger``: the execution ledger and a gateway request's ``Idempotency-Key``;
- ``routes``: enabled routes as cached profiles, the ignore list, route measurements;
- ``contracts``: contract versions, stored and parsed (cached per process).

Settings read (defaults in ``reverie_ops/settings.py``): ROUTING_REDIS_URL, ROUTING_BREAKER
(dict of ``BreakerConfig`` fields), ROUTING_BREAKER_PREFIX, ROUTING_EVENTS_ASYNC,
ROUTING_CACHE_S, ROUTING_CONNECT_TIMEOUT_S, ROUTING_PRECONNECT_TIMEOUT_S, ROUTING_MIN_STRUCTURED_HONOURED,
ROUTING_MAX_CONNECTIONS, ROUTING_IDEMPOTENCY_KEEP_S, ROUTING_CLAIM_LEASE_S.
"""
