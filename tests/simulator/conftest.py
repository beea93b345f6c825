"""Fixtures for the simulator's tests: fleets built in Python, a simulator in a thread, and
small helpers to speak to it over real HTTP with httpx."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fake_openrouter.server import SimulatorHandle, start_in_thread

MODEL = "vendor/story-model"
ALL_PARAMS = [
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "seed",
    "stream",
    "response_format",
    "structured_outputs",
]
PORTUGUESE = [
    {"role": "system", "content": "You are a storyteller. Always reply in Portuguese."},
    {"role": "user", "content": "Continue the scene at the inn."},
]


def endpoint(
    tag: str,
    provider: str | None = None,
    *,
    faults: dict[str, Any] | None = None,
    wire: dict[str, Any] | None = None,
    params: list[str] | None = None,
    prompt_price: str = "0.0000002",
    completion_price: str = "0.0000004",
) -> dict[str, Any]:
    """One endpoint entry of a fleet file; the display name defaults to the slug, capitalised."""
    entry: dict[str, Any] = {
        "provider": provider or tag.split("/")[0].capitalize(),
        "tag": tag,
        "quantization": tag.split("/")[1] if tag.split("/")[1] in ("fp8", "bf16", "fp4") else "fp8",
        "supported_parameters": ALL_PARAMS if params is None else params,
        "pricing": {"prompt": prompt_price, "completion": completion_price},
        # Fast by default so the suite stays quick; tests about timing set their own values.
        "faults": {"ttft_ms": [5, 15], "tokens_per_s": 5000, **(faults or {})},
    }
    if wire is not None:
        entry["wire"] = wire
    return entry


def fleet(*endpoints: dict[str, Any], seed: int = 11) -> dict[str, Any]:
    """A fleet of one model (``MODEL``) hosted by ``endpoints``."""
    return {
        "seed": seed,
        "models": [{"id": MODEL, "context_length": 131072, "endpoints": list(endpoints)}],
    }


class Sim:
    """A running simulator plus an httpx client bound to it."""

    def __init__(self, handle: SimulatorHandle, fleet_path: Path) -> None:
        self.handle = handle
        self.fleet_path = fleet_path
        self.base_url = handle.base_url
        self.client = httpx.Client(base_url=handle.base_url, timeout=10)

    def chat(
        self, pin: str | None = None, *, fallbacks: bool = False, **body: Any
    ) -> httpx.Response:
        """POST /chat/completions; ``pin`` sends provider {only:[pin], allow_fallbacks}."""
        payload: dict[str, Any] = {"model": MODEL, "messages": PORTUGUESE, **body}
        if pin is not None:
            payload["provider"] = {"only": [pin], "allow_fallbacks": fallbacks}
        return self.client.post("/chat/completions", json=payload)

    def stream(self, pin: str | None = None, **body: Any) -> tuple[httpx.Response, bytes]:
        """A streaming chat request read to its end: (response, raw body bytes)."""
        payload: dict[str, Any] = {"model": MODEL, "messages": PORTUGUESE, "stream": True, **body}
        if pin is not None:
            payload["provider"] = {"only": [pin], "allow_fallbacks": False}
        with self.client.stream("POST", "/chat/completions", json=payload) as response:
            raw = b"".join(response.iter_raw())
        return response, raw

    def stats(self) -> dict[str, int]:
        return httpx.get(f"{self.handle.root_url}/_sim/stats").json()["requests"]

    def write_fleet(self, data: dict[str, Any] | str) -> None:
        """Replace the fleet file atomically (the simulator reloads it on its next request)."""
        tmp = self.fleet_path.with_suffix(".tmp")
        tmp.write_text(data if isinstance(data, str) else json.dumps(data))
        tmp.replace(self.fleet_path)


def sse_events(raw: bytes) -> list[tuple[str, Any]]:
    """Frames of an SSE body: ("comment", text), ("data", parsed JSON) or ("done", None)."""
    events: list[tuple[str, Any]] = []
    for block in raw.decode("utf-8").split("\n\n"):
        if not block.strip():
            continue
        if block.startswith(":"):
            events.append(("comment", block[1:].strip()))
        elif block == "data: [DONE]":
            events.append(("done", None))
        else:
            assert block.startswith("data: "), block
            events.append(("data", json.loads(block[len("data: ") :])))
    return events


def streamed_content(raw: bytes) -> str:
    """The concatenated content deltas of an SSE body."""
    return "".join(
        choice["delta"].get("content") or ""
        for kind, obj in sse_events(raw)
        if kind == "data"
        for choice in obj.get("choices", [])
    )


def content_of(response: httpx.Response) -> str:
    return str(response.json()["choices"][0]["message"]["content"])


@pytest.fixture
def thread_sim(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], Sim]]:
    """Factory: write a fleet to tmp_path and serve it in a thread; stopped after the test."""
    sims: list[Sim] = []

    def _start(data: dict[str, Any]) -> Sim:
        path = tmp_path / f"fleet-{len(sims)}.json"
        path.write_text(json.dumps(data))
        sim = Sim(start_in_thread(path), path)
        sims.append(sim)
        return sim

    yield _start
    for sim in sims:
        sim.client.close()
        sim.handle.stop()
