"""The demo's tour of the gateway: every shipped contract called once through the official
OpenAI SDK over real HTTP, as a product backend would call it.

``demo_routes_ensure`` gives the demo its routes (the canary's endpoints of the watched
model, plus the default fleet's vision host, which the canary does not watch);
``demo_calls`` makes one SDK call per contract and reports the route, the attempts and
their validation from the attempt events. The web server is the caller's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openai
import redis

from core.terminal import MAX_WIDTH, fill
from routing.discovery import routes_sync
from routing.models import AttemptEvent, ContractVersion, Route
from routing.services.contracts import contract_version_create, contracts_load_file
from routing.terms import BreakerState, ErrorCode, RequestOutcome, Workload

CONTRACTS_FILE = Path(__file__).resolve().parent / "contract_files" / "workloads.json"
# The default fleet's vision model and host (canary/fleets/default.json).
VISION_MODEL = "meta-llama/llama-3.2-90b-vision-instruct"
VISION_TAG = "iris/bf16"
_PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

# One request per workload class, what such a backend would send.
_REQUESTS: dict[str, dict[str, Any]] = {
    Workload.TEXT: {"messages": [
        {"role": "system", "content": "You are Mira, the innkeeper. Reply in English, in character."},
        {"role": "user", "content": "*pushes the door open, shaking off the rain* Is there a room free tonight?"}],
        "stream": True},
    Workload.STRUCTURED: {"messages": [{"role": "user", "content": "Extract the invoice: 2 lanterns at 12.50 EUR, one map at 7 EUR."}]},
    Workload.TOOLS: {"messages": [{"role": "user", "content": "Book a table for four at the Lantern tonight at eight."}]},
    Workload.VISION: {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Write a one-line caption for this picture."},
        {"type": "image_url", "image_url": {"url": _PIXEL}}]}], "max_tokens": 80},
    Workload.LONG_CONTEXT: {"messages": [{"role": "user", "content": "Summarise the chapter so far: " + "The caravan crossed the dunes. " * 40}],
                     "max_tokens": 300},
}


@dataclass
class DemoCall:
    """One contract's call: ``outcome`` "accepted" or the SDK's error class and status;
    ``summary`` what came back (a tool call, the gateway's error) shown in full;
    ``reply`` a reply's text (shown as a sample); ``attempts`` (route, status,
    validation) from the attempt events."""

    contract: str
    outcome: str
    route: str = ""
    summary: str = ""
    reply: str = ""
    operation: str = ""
    attempts: list[tuple[str, str, str]] = field(default_factory=list)


def demo_routes_ensure(model_id: str, *, model_class: str) -> list[str]:
    """Routes for the demo: ``routes_sync`` of ``model_id`` (new ones enabled, with
    ``model_class``) and the vision host's route. Returns the enabled route names."""
    routes_sync(model_id, enable_new=True, model_class=model_class)
    Route.objects.update_or_create(
        name="llama-3-2-90b-vision-iris-bf16",
        defaults={"model_id": VISION_MODEL, "provider_tag": VISION_TAG, "modalities": ["text", "image"],
                  "context_length": 131072, "price_prompt_usd": "0.0000012", "price_completion_usd": "0.0000012",
                  "enabled": True},
    )
    return sorted(Route.objects.filter(enabled=True).values_list("name", flat=True))


def demo_calls(base_url: str, token: str, *, model_id: str, flush: Callable[[], None]) -> list[DemoCall]:
    """Load the shipped contracts and call each once through the OpenAI SDK at
    ``base_url`` (ending in ``/v1``) with service ``token``, ``max_retries=0`` (the
    gateway owns retries, routing/README.md). ``flush`` waits for the event writer."""
    contracts_load_file(CONTRACTS_FILE, actor="demo")
    client = openai.OpenAI(base_url=base_url, api_key=token, max_retries=0, timeout=120)
    calls: list[DemoCall] = []
    names = sorted({row.name for row in ContractVersion.objects.all()})
    for name in names:
        row = ContractVersion.objects.filter(name=name).order_by("-version").first()
        assert row is not None
        calls.append(_call(client, f"{name}@{row.version}", row.spec, model_id))
    flush()
    for call in calls:
        if call.route or call.outcome != RequestOutcome.ACCEPTED:
            call.attempts = _attempts(call)
    return calls


def _call(client: openai.OpenAI, key: str, spec: dict[str, Any], model_id: str) -> DemoCall:
    workload = spec["workload"]
    request = dict(_REQUESTS[workload])
    headers = {"X-Routing-Contract": key}
    if spec.get("side_effects"):
        headers["Idempotency-Key"] = f"demo-{uuid.uuid4().hex}"
    if workload == Workload.TOOLS:
        request["tools"] = [{"type": "function", "function": {"name": n, "parameters": s}}
                            for n, s in spec["tools"].items()]
    model = VISION_MODEL if workload == Workload.VISION else model_id
    call = DemoCall(key, RequestOutcome.ACCEPTED)
    try:
        if request.pop("stream", False):
            raw = client.chat.completions.with_streaming_response.create(
                model=model, stream=True, extra_headers=headers, **request)
            with raw as response:
                call.route = response.headers.get("X-Routing-Route", "")
                call.operation = response.headers.get("X-Routing-Operation-Id", "")
                chunks, text = 0, []
                for chunk in response.parse():
                    if chunk.choices and chunk.choices[0].delta.content:
                        chunks += 1
                        text.append(chunk.choices[0].delta.content)
                call.summary, call.reply = f"streamed {chunks} chunks:", "".join(text)
            return call
        response = client.chat.completions.with_raw_response.create(model=model, extra_headers=headers, **request)
        completion = response.parse()
        call.route = response.headers.get("X-Routing-Route", "")
        call.operation = response.headers.get("X-Routing-Operation-Id", "")
        message = completion.choices[0].message
        if message.tool_calls:
            tool = message.tool_calls[0]
            name = getattr(getattr(tool, "function", None), "name", "?")
            arguments = getattr(getattr(tool, "function", None), "arguments", "")
            call.summary = f"tool call {name}({arguments})"
        else:
            call.summary, call.reply = "reply:", message.content or ""
    except openai.APIStatusError as exc:
        call.outcome = f"{type(exc).__name__} {exc.status_code}"
        body = exc.body if isinstance(exc.body, dict) else {}
        call.summary = f"{body.get('code')}: {body.get('message')}"
        call.route = exc.response.headers.get("X-Routing-Route", "")
        call.operation = exc.response.headers.get("X-Routing-Operation-Id", "")
    return call


def _attempts(call: DemoCall) -> list[tuple[str, str, str]]:
    if not call.operation:
        return []
    rows = AttemptEvent.objects.filter(request__operation_id=call.operation).order_by("index")
    return [(a.route, a.status, a.validation or a.failure_reason) for a in rows]


# How much of a reply the tour shows, in lines: a sample of what came back, not all of it.
REPLY_LINES = 3


def demo_report(calls: list[DemoCall], width: int = MAX_WIDTH) -> str:
    """The calls as text for a terminal ``width`` columns wide: one block per contract,
    each attempt's validation in full, then what came back (a tool call in full, a reply's
    first ``REPLY_LINES`` lines), wrapped at word boundaries."""
    lines = ["", "The gateway, once per shipped contract, through the OpenAI SDK (max_retries=0):"]
    for call in calls:
        lines += fill(f"{call.contract:<22} {call.outcome:<10} route={call.route or '-'} attempts={len(call.attempts)}",
                      width, first="  ", rest="      ")
        for route, status, validation in call.attempts:
            lines += fill(f"{route} {status}: {validation}", width, first="      ", rest="        ")
        lines += fill(f"{call.summary} {call.reply}".strip(), width, first="      -> ", rest="         ",
                      max_lines=REPLY_LINES if call.reply else None)
    return "\n".join(lines)


# The breaker part of the tour: the default fleet's meridian/fp8 host times out, answers
# 502 or breaks mid-stream on most requests (canary/fleets/default.json). The demo labels
# its route as the only one in BREAKER_REGION and calls it under a contract restricted to
# that region (as a data-residency contract would be), so each call's one attempt lands on
# it and the gateway's own breaker counts the failures until it opens.
BREAKER_TAG = "meridian/fp8"
BREAKER_REGION = "eu-north"
BREAKER_CONTRACT: dict[str, Any] = {
    "name": "roleplay-eu", "version": 1, "workload": Workload.TEXT, "modalities": ["text"],
    "model_classes": ["chat-70b"], "regions": [BREAKER_REGION],
    "deadline_s": 6, "connect_s": 0.5, "generation_s": 2, "validation_s": 0.1, "attempt_timeout_s": 2,
    "min_output_chars": 20, "max_attempts": 1, "max_fallbacks": 0,
}
_BREAKER_MESSAGES: list[Any] = [
    {"role": "system", "content": "You are Mira, the innkeeper. Reply in English, in character."},
    {"role": "user", "content": "*sets a wet cloak by the fire* Is the kitchen still open?"}]


@dataclass
class BreakerTrip:
    """The breaker part of the tour.

    ``route``/``tag``: the route called and its endpoint; ``calls``: each call's outcome
    ("accepted" or the SDK's error class, status and the gateway's code); ``failure_class``:
    the class whose breaker opened ("" if none did); ``open_until_ms`` (epoch ms) and
    ``window`` (the class's window of the last calls, "1" a failure) read back from the
    store when it opened; ``refused``: the call made after it opened (the gateway's
    answer without calling the host); ``store_error``: why the store could not be read
    (Redis down: the breakers fail open and nothing opens).
    """

    route: str
    tag: str
    calls: list[str] = field(default_factory=list)
    failure_class: str = ""
    open_until_ms: int = 0
    opened_at_ms: int = 0
    refused: str = ""
    store_error: str = ""


def demo_breaker_route(model_id: str) -> str:
    """Label the ``BREAKER_TAG`` route of ``model_id`` (made by ``demo_routes_ensure``) as
    the only one in ``BREAKER_REGION`` and return its name. Raises ``Route.DoesNotExist``
    when the fleet has no such endpoint."""
    Route.objects.filter(model_id=model_id, region=BREAKER_REGION).exclude(provider_tag=BREAKER_TAG).update(region="")
    route = Route.objects.get(model_id=model_id, provider_tag=BREAKER_TAG, enabled=True)
    route.region = BREAKER_REGION
    route.save(update_fields=["region"])
    return route.name


def open_breaker(fields: dict[str, str]) -> tuple[str, int, int]:
    """The open breaker in one route's store fields (``BreakerStore.snapshot`` shape):
    (failure class, open until ms, opened at ms), or ("", 0, 0) when none is open."""
    for key, value in sorted(fields.items()):
        if key.endswith(":state") and value == BreakerState.OPEN:
            cls = key[: -len(":state")]
            return cls, int(float(fields.get(f"{cls}:until", 0) or 0)), int(float(fields.get(f"{cls}:opened", 0) or 0))
    return "", 0, 0


def demo_breaker_trip(base_url: str, token: str, *, model_id: str, route: str,
                      snapshot: Callable[[str], dict[str, str]], max_calls: int = 40) -> BreakerTrip:
    """Call ``route`` (pinned by ``BREAKER_CONTRACT``'s region) through the OpenAI SDK at
    ``base_url`` with service ``token`` until its breaker opens, at most ``max_calls``
    times (each call is bounded by the contract's 2 s attempt timeout), then once more to
    show the refusal. ``snapshot(route)`` reads the route's breaker fields (the store's
    ``snapshot``); a ``redis.RedisError`` from it ends the calls with ``store_error`` set
    (with Redis down the gateway's breakers fail open, docs/sources/resilience.md,
    "Circuit breakers")."""
    row = contract_version_create(dict(BREAKER_CONTRACT), actor="demo", note="the demo's breaker tour")
    client = openai.OpenAI(base_url=base_url, api_key=token, max_retries=0, timeout=30)
    key = f"{row.name}@{row.version}"
    trip = BreakerTrip(route=route, tag=BREAKER_TAG)
    for _ in range(max_calls):
        trip.calls.append(_plain_call(client, key, model_id))
        try:
            cls, until, opened = open_breaker(snapshot(route))
        except redis.RedisError as exc:
            trip.store_error = f"{type(exc).__name__}: {exc}"
            return trip
        if cls:
            trip.failure_class, trip.open_until_ms, trip.opened_at_ms = cls, until, opened
            trip.refused = _plain_call(client, key, model_id)
            return trip
    return trip


def _plain_call(client: openai.OpenAI, key: str, model_id: str) -> str:
    try:
        client.chat.completions.create(model=model_id, messages=_BREAKER_MESSAGES, max_tokens=120,
                                      extra_headers={"X-Routing-Contract": key})
    except openai.APIStatusError as exc:
        body = exc.body if isinstance(exc.body, dict) else {}
        message = str(body.get("message"))
        if body.get("code") == ErrorCode.ALL_ROUTES_SUPPRESSED:
            # Its first sentence says it; the rest lists every route ruled out and why.
            message = message.split(". ")[0] + "."
        return f"{type(exc).__name__} {exc.status_code} {body.get('code')}: {message}"
    return RequestOutcome.ACCEPTED


def demo_breaker_report(trip: BreakerTrip, *, page_url: str, width: int = MAX_WIDTH) -> str:
    """The breaker part of the tour as text for a terminal ``width`` columns wide, wrapped
    at word boundaries, ending with where to look (``page_url``)."""
    lines = [""] + fill(f"The gateway's circuit breaker: contract {BREAKER_CONTRACT['name']} may only use region "
                        f"{BREAKER_REGION}, whose one route is {trip.route} ({trip.tag}, a failing host of the fleet):",
                        width, rest="  ")
    for i, outcome in enumerate(trip.calls, 1):
        lines += fill(outcome, width, first=f"  call {i:>2}: ")
    if trip.store_error:
        lines += fill(f"The breaker store (Redis) is unreachable ({trip.store_error}): breakers fail open, "
                      "so none opened; the demo goes on without one.", width, first="  ")
        return "\n".join(lines)
    if not trip.failure_class:
        lines += fill(f"No breaker opened after {len(trip.calls)} calls (the host answered often enough).", width, first="  ")
        return "\n".join(lines)
    until = datetime.fromtimestamp(trip.open_until_ms / 1000, UTC)
    lines += fill(trip.refused, width, first="  then, breaker open: ")
    lines += fill(f"Opened: the {trip.failure_class} breaker of route {trip.route} after {len(trip.calls)} calls; "
                  f"open until {until:%Y-%m-%d %H:%M:%S} UTC, then one trial call (half-open).", width, rest="  ",
                  keep=[f"Opened: the {trip.failure_class} breaker of route {trip.route}",
                        f"open until {until:%Y-%m-%d %H:%M:%S} UTC"])
    lines += [f"  Look at it: {page_url}"]
    lines += fill("(Observability > Circuit breakers; each call is under Routing > Request events).", width, first="  ")
    return "\n".join(lines)
