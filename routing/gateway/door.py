"""The gateway: one request in, one accepted answer or one clear failure out.

``Gateway.complete(contract, body)`` checks the request (``routing.request_check``),
shapes what the routes receive (``routing.request_shape``) and runs the chain of attempts
(``routing.gateway.chain``, where its steps are listed); it returns a ``GatewayResult``
(``routing.gateway.result``) and hands it to the event sink.

Everything with a side outside this module is injected: routes, breaker store, HTTP
upstream, monotonic clock, wall clock (epoch seconds, for breakers shared by processes),
sleep, random source, ignore list and event sink. Pure of Django.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from routing.breaker import BreakerStore
from routing.contracts import Contract
from routing.conversation_language import expected_language
from routing.deadline import Deadline
from routing.gateway.attempts import RequestRun
from routing.gateway.chain import AttemptChain
from routing.gateway.result import EventSink, GatewayResult
from routing.gateway.upstream import Upstream
from routing.request_check import RequestInvalid, caller_max_tokens, check_request
from routing.request_shape import canonical_json, new_id, upstream_body
from routing.selection import (
    DEFAULT_MIN_STRUCTURED_HONOURED,
    RequestNeeds,
    RouteProfile,
    candidates,
    estimate_needs,
)


class Gateway:
    """Orchestrates attempts for contracts over routes (see the module docstring).

    ``routes()``: the current route profiles; ``breakers``: the shared breaker store (None
    disables breakers, for pure tests); ``upstream``: the HTTP path; ``clock``: monotonic
    seconds; ``wall``: epoch seconds (breaker times shared across processes); ``sleep``;
    ``rng``: backoff jitter; ``ignored(model_id)``: lower-cased tags/slugs on the ignore
    list; ``sink``: receives every ``GatewayResult``; ``pool``: threads for hedges;
    ``demoted(model_id)``: lower-cased tags of live suspects (ranked after their peers);
    ``output_contracts(mode)``: the contracts (``name@version``) of that output mode, named
    when a caller's ``response_format`` is refused under a contract without it.
    """

    def __init__(
        self,
        *,
        routes: Callable[[], Sequence[RouteProfile]],
        upstream: Upstream,
        breakers: BreakerStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        ignored: Callable[[str], frozenset[str]] | None = None,
        sink: EventSink | None = None,
        min_structured_honoured: float = DEFAULT_MIN_STRUCTURED_HONOURED,
        pool: ThreadPoolExecutor | None = None,
        demoted: Callable[[str], frozenset[str]] | None = None,
        output_contracts: Callable[[str], Sequence[str]] | None = None,
    ) -> None:
        self.routes = routes
        self.upstream = upstream
        self.breakers = breakers
        self.clock = clock
        self.wall = wall
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.ignored = ignored
        self.sink = sink
        self.min_structured_honoured = min_structured_honoured
        self._pool = pool
        self.demoted = demoted
        self.output_contracts = output_contracts
        self._pool_lock = threading.Lock()

    # ------------------------------------------------------------------ entry point

    def complete(self, contract: Contract, body: Mapping[str, Any], *, operation_id: str | None = None,
                 stream: bool = False, language: str | None = None) -> GatewayResult:
        """Serve one chat request under ``contract``.

        Returns a ``GatewayResult`` (accepted, failed or unknown); raises
        ``RequestInvalid`` only for a malformed request (before any upstream request).

        ``stream``: the client asked for a stream. Under a ``prefix`` commit point (and
        without side effects: a committed stream cannot be replayed from the ledger) the
        result may be ``"streaming"``: the held prefix passed the pre-commit checks
        and ``result.committed`` passes the rest on; its final result is emitted when the
        stream ends. ``language`` (ISO 639-1, the ``X-Expected-Language`` header) is the
        language the reply must be in; without it the contract's ``expected_language``,
        else the conversation's (``routing.conversation_language``), else none (the
        reply is checked for mixing only).
        """
        deadline = Deadline(contract.deadline_s, self.clock)
        started_wall = self.wall()
        check_request(body, contract, output_contracts=self.output_contracts)
        op = operation_id or new_id()
        messages = body["messages"]
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or contract.max_output_tokens
        needs = estimate_needs(messages, max_tokens=max_tokens, tools=body.get("tools"))
        model = self.model_check(contract, body.get("model"), needs)
        base = upstream_body(contract, body)
        client_provider = body.get("provider")
        expected = expected_language(language, contract.expected_language, messages)
        run = RequestRun(
            self, contract, deadline, needs, base, client_provider, op, started_wall,
            model=model,
            live=stream and contract.stream_commit.prefix and not contract.side_effects,
            language=expected.language,
            language_source=expected.source,
            request_text=canonical_json(messages),
            client_max_tokens=caller_max_tokens(body),
            body=dict(body),
        )
        result = AttemptChain(run).execute()
        result.request_text = run.request_text
        if self.sink is not None and result.committed is None:
            self.sink.emit(result)
        return result

    def model_check(self, contract: Contract, model: Any, needs: RequestNeeds) -> str | None:
        """The request's ``model``: omitted (or empty), every capable route stays a
        candidate (None); else it must be the model id of a route that can serve
        ``contract`` (case-insensitive), and only that model's routes are candidates.
        Raises ``RequestInvalid`` naming the models the contract serves (none capable:
        None, and the run answers that no route satisfies the contract)."""
        if model is None or model == "":
            return None
        if not isinstance(model, str):
            raise RequestInvalid("model", f"expected a model id string, got {model!r}")
        capable, _ = candidates(list(self.routes()), contract, needs, budget_left_usd=contract.max_cost_usd,
                                ignored=frozenset(), min_structured_honoured=self.min_structured_honoured)
        served = sorted({r.model_id for r in capable})
        if not served:
            return None  # no route at all: the run answers no_eligible_route (422)
        wanted = model.strip().casefold()
        for model_id in served:
            if model_id.casefold() == wanted:
                return model_id
        raise RequestInvalid("model", f"{model!r} is not served under contract {contract.key}; "
                             f"it serves {served} (or omit model to let the gateway choose)")

    def pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="routing-hedge")
            return self._pool

    def ignored_for(self, model_id: str) -> frozenset[str]:
        return self.ignored(model_id) if self.ignored is not None else frozenset()

    def demoted_for(self, model_id: str) -> frozenset[str]:
        """Lower-cased tags of ``model_id``'s live suspects, ranked after their peers."""
        return self.demoted(model_id) if self.demoted is not None else frozenset()
