"""Tool calls and schema-coherent structured output: a host given ``tools`` calls one
whose arguments satisfy the tool's schema, unless its ``tool_calls`` fault breaks it."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.simulator.conftest import ALL_PARAMS, Sim, endpoint, fleet, sse_events

BOOK = {
    "type": "object",
    "properties": {
        "restaurant_id": {"type": "string", "minLength": 1},
        "party_size": {"type": "integer", "minimum": 1, "maximum": 20},
        "time": {"type": "string", "format": "date-time"},
    },
    "required": ["restaurant_id", "party_size", "time"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "book_table", "parameters": BOOK}},
         {"type": "function", "function": {"name": "cancel", "parameters": {"type": "object", "properties": {}}}}]
PARAMS = [*ALL_PARAMS, "tools", "tool_choice"]
MODES = ("ok", "unknown_tool", "invalid_arguments", "malformed_json", "parallel")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fake_openrouter.server import start_in_thread

    endpoints = [endpoint(f"tools-{m.replace('_', '-')}/fp8", faults={"tool_calls": m}, params=PARAMS) for m in MODES]
    endpoints.append(endpoint("plain/fp8"))
    path = tmp_path_factory.mktemp("tools") / "fleet.json"
    path.write_text(json.dumps(fleet(*endpoints)))
    handle = start_in_thread(path)
    simulator = Sim(handle, path)
    yield simulator
    simulator.client.close()
    handle.stop()


def calls(sim: Sim, pin: str, **body: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    choice = sim.chat(pin, tools=TOOLS, **body).json()["choices"][0]
    return choice, choice["message"].get("tool_calls") or []


def test_a_healthy_host_calls_the_first_tool_with_valid_arguments(sim: Sim) -> None:
    choice, [call] = calls(sim, "tools-ok/fp8")
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "book_table"
    jsonschema.validate(json.loads(call["function"]["arguments"]), BOOK, format_checker=jsonschema.FormatChecker())


def test_tool_choice_names_the_tool_and_none_gets_text(sim: Sim) -> None:
    _, [call] = calls(sim, "tools-ok/fp8", tool_choice={"type": "function", "function": {"name": "cancel"}})
    assert call["function"]["name"] == "cancel"
    choice, none = calls(sim, "tools-ok/fp8", tool_choice="none")
    assert none == [] and choice["finish_reason"] == "stop" and choice["message"]["content"]


def test_a_host_without_tools_support_ignores_them(sim: Sim) -> None:
    choice, found = calls(sim, "plain/fp8")
    assert found == [] and choice["message"]["content"]


def test_tool_call_faults_break_the_call_as_named(sim: Sim) -> None:
    _, [unknown] = calls(sim, "tools-unknown-tool/fp8")
    assert unknown["function"]["name"] not in {"book_table", "cancel"}
    _, [wrong] = calls(sim, "tools-invalid-arguments/fp8")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(wrong["function"]["arguments"]), BOOK)
    _, [malformed] = calls(sim, "tools-malformed-json/fp8")
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed["function"]["arguments"])
    _, parallel = calls(sim, "tools-parallel/fp8")
    assert len(parallel) == 2 and len({c["id"] for c in parallel}) == 2


def test_a_streamed_tool_call_sends_its_name_first_then_its_arguments_in_pieces(sim: Sim) -> None:
    _, raw = sim.stream("tools-ok/fp8", tools=TOOLS)
    deltas = [c["delta"]["tool_calls"][0] for kind, obj in sse_events(raw) if kind == "data"
              for c in obj.get("choices", []) if c.get("delta", {}).get("tool_calls")]
    assert deltas[0]["function"] == {"name": "book_table", "arguments": ""} and "id" in deltas[0]
    assert len(deltas) > 2 and all(d["index"] == 0 for d in deltas)
    arguments = "".join(d["function"]["arguments"] for d in deltas)
    jsonschema.validate(json.loads(arguments), BOOK)
    finishes = [c["finish_reason"] for kind, obj in sse_events(raw) if kind == "data"
                for c in obj.get("choices", []) if c.get("finish_reason")]
    assert finishes[0] == "tool_calls"


def test_an_invoice_instance_adds_up_and_names_its_currency(sim: Sim) -> None:
    schema = {"type": "object", "required": ["currency", "total", "line_items"], "properties": {
        "currency": {"type": "string"}, "total": {"type": "number"},
        "line_items": {"type": "array", "items": {"type": "object", "required": ["amount"],
                                                  "properties": {"amount": {"type": "number"}}}}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "invoice", "strict": True, "schema": schema}}
    instance = json.loads(sim.chat("tools-ok/fp8", response_format=fmt).json()["choices"][0]["message"]["content"])
    assert instance["currency"] == "EUR"
    assert instance["total"] == pytest.approx(sum(i["amount"] for i in instance["line_items"]), abs=0.01)


def test_image_input_needs_a_model_that_takes_images(tmp_path) -> None:
    from fake_openrouter.server import start_in_thread

    world = fleet(endpoint("plain/fp8"))
    vision = {"id": "vendor/vision-model", "input_modalities": ["text", "image"], "endpoints": [endpoint("eye/bf16")]}
    world["models"].append(vision)
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(world))
    handle = start_in_thread(path)
    try:
        sim = Sim(handle, path)
        image = [{"role": "user", "content": [{"type": "text", "text": "Caption it."},
                                              {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]
        refused = sim.chat(messages=image)
        assert refused.status_code == 404 and "image input" in refused.json()["error"]["message"]
        payload = {"model": "vendor/vision-model", "messages": image}
        assert sim.client.post("/chat/completions", json=payload).status_code == 200
        listed = {m["id"]: m["architecture"]["input_modalities"] for m in sim.client.get("/models").json()["data"]}
        assert listed == {"vendor/story-model": ["text"], "vendor/vision-model": ["text", "image"]}
        sim.client.close()
    finally:
        handle.stop()
