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
from pathlib import Path
from typing import Any

import openai

from routing.discovery import routes_sync
from routing.models import AttemptEvent, ContractVersion, Route
from routing.services.contracts import contracts_load_file

CONTRACTS_FILE = Path(__file__).resolve().parent / "contract_files" / "workloads.json"
# The default fleet's vision model and host (canary/fleets/default.json).
VISION_MODEL = "meta-llama/llama-3.2-90b-vision-instruct"
VISION_TAG = "iris/bf16"
_PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

# One request per workload class, what such a backend would send.
_REQUESTS: dict[str, dict[str, Any]] = {
    "text": {"messages": [
        {"role": "system", "content": "You are Mira, the innkeeper. Reply in English, in character."},
        {"role": "user", "content": "*pushes the door open, shaking off the rain* Is there a room free tonight?"}],
        "stream": True},
    "structured": {"messages": [{"role": "user", "content": "Extract the invoice: 2 lanterns at 12.50 EUR, one map at 7 EUR."}]},
    "tools": {"messages": [{"role": "user", "content": "Book a table for four at the Lantern tonight at eight."}]},
    "vision": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Write a one-line caption for this picture."},
        {"type": "image_url", "image_url": {"url": _PIXEL}}]}], "max_tokens": 80},
    "long_context": {"messages": [{"role": "user", "content": "Summarise the chapter so far: " + "The caravan crossed the dunes. " * 40}],
                     "max_tokens": 300},
}


@dataclass
class DemoCall:
    """One contract's call: ``outcome`` "accepted" or the SDK's error class and status;
    ``attempts`` (route, status, validation) from the attempt events."""

    contract: str
    outcome: str
    route: str = ""
    summary: str = ""
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
        if call.route or call.outcome != "accepted":
            call.attempts = _attempts(call)
    return calls


def _call(client: openai.OpenAI, key: str, spec: dict[str, Any], model_id: str) -> DemoCall:
    workload = spec["workload"]
    request = dict(_REQUESTS[workload])
    headers = {"X-Routing-Contract": key}
    if spec.get("side_effects"):
        headers["Idempotency-Key"] = f"demo-{uuid.uuid4().hex}"
    if workload == "tools":
        request["tools"] = [{"type": "function", "function": {"name": n, "parameters": s}}
                            for n, s in spec["tools"].items()]
    model = VISION_MODEL if workload == "vision" else model_id
    call = DemoCall(key, "accepted")
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
                call.summary = f"streamed {chunks} chunks: {''.join(text)[:70]!r}..."
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
            call.summary = repr((message.content or "")[:90])
    except openai.APIStatusError as exc:
        call.outcome = f"{type(exc).__name__} {exc.status_code}"
        body = exc.body if isinstance(exc.body, dict) else {}
        call.summary = f"{body.get('code')}: {str(body.get('message'))[:120]}"
        call.route = exc.response.headers.get("X-Routing-Route", "")
        call.operation = exc.response.headers.get("X-Routing-Operation-Id", "")
    return call


def _attempts(call: DemoCall) -> list[tuple[str, str, str]]:
    if not call.operation:
        return []
    rows = AttemptEvent.objects.filter(request__operation_id=call.operation).order_by("index")
    return [(a.route, a.status, a.validation or a.failure_reason) for a in rows]


def demo_report(calls: list[DemoCall]) -> str:
    """The calls as text: one block per contract."""
    lines = ["", "The gateway, once per shipped contract, through the OpenAI SDK (max_retries=0):"]
    for call in calls:
        lines.append(f"  {call.contract:<22} {call.outcome:<10} route={call.route or '-'} attempts={len(call.attempts)}")
        for route, status, validation in call.attempts:
            lines.append(f"      {route:<40} {status:<10} {validation[:110]}")
        lines.append(f"      -> {call.summary}")
    return "\n".join(lines)
