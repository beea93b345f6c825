"""One request's life through the gateway, pure of Django (an import-linter contract).

Imports run one way, top to bottom, never back up:

- ``door``: ``Gateway.complete``, one request in, one accepted answer or one clear failure out;
- ``chain``: the chain of attempts behind one request (fallback, hedges, backoff, deadline);
- ``attempts``: one request's run and each attempt sent, classified, validated, recorded;
- ``commit``, ``live_feed``, ``live``: the commit point of a streamed answer, the verdicts
  fed to the canary's live scorecard, the committed stream as the client's event stream;
- ``result``: what the gateway hands back (``GatewayResult``, ``AttemptRecord``, ``Committed``);
- ``upstream``: the one HTTP path to a route (httpx), its clocks and caps.

The pure rules they apply (selection, failures, validation, the request checks, breaker,
deadline, backoff) sit below, in ``routing``; the services that build the process's gateway
and the edges (API, admin, tasks) sit above.
"""
