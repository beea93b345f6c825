"""Unknown fields below the top level are a 400 naming their path, and nothing the
``openai`` SDK sends is refused (pure: the SDK's request bodies are captured from its
own HTTP client, never sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from routing.request_check import BodyInvalid, body_check
from routing.request_fields import request_fields_check
from routing.request_values import request_values_check
from tests.invoice_model import Invoice

OK = {"messages": [{"role": "user", "content": "hi"}]}
BOOK = {"type": "object", "properties": {"party_size": {"type": "integer", "minimum": 1}},
        "required": ["party_size"], "additionalProperties": False}
TOOL = {"type": "function", "function": {"name": "book_table", "parameters": BOOK}}
CALL = {"id": "c1", "type": "function", "function": {"name": "book_table", "arguments": "{}"}}


def checked(body: dict[str, Any]) -> None:
    """The edge's checks, in the gateway's order (``chat_completion_create``)."""
    request_fields_check(body)
    body_check(body)
    request_values_check(body)


@pytest.mark.parametrize(("body", "path", "near"), [
    # Found by a new user's trial: both were accepted and silently dropped upstream.
    ({"messages": [{"role": "user", "content": "hi", "nmae": "Ana"}]}, "messages[0].nmae", "name"),
    ({**OK, "tools": [{"type": "function", "function": {**TOOL["function"], "strcit": True}}]},
     "tools[0].function.strcit", "strict"),
    ({**OK, "tools": [{"type": "function", "functoin": TOOL["function"]}]}, "tools[0].functoin", "function"),
    ({"messages": [{"role": "system", "content": "be brief", "tool_call_id": "c1"}, OK["messages"][0]]},
     "messages[0].tool_call_id", None),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "txet": "x"}]}]},
     "messages[0].content[0].txet", "text"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png", "detial": "low"}}]}]},
     "messages[0].content[0].image_url.detial", "detail"),
    ({"messages": [*OK["messages"], {"role": "assistant", "content": None,
                                      "tool_calls": [{**CALL, "function": {"name": "book_table", "argumnets": "{}"}}]}]},
     "messages[1].tool_calls[0].function.argumnets", "arguments"),
    ({"messages": [*OK["messages"], {"role": "assistant", "content": None, "tool_calls": [{**CALL, "idx": 0}]}]},
     "messages[1].tool_calls[0].idx", "id"),
    ({**OK, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "stirct": True}}},
     "response_format.json_schema.stirct", "strict"),
    ({**OK, "response_format": {"type": "json_object", "schema": {}}}, "response_format.schema", None),
    ({**OK, "tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "book_table", "strict": True}}},
     "tool_choice.function.strict", None),
    ({**OK, "stream": True, "stream_options": {"include_usge": True}}, "stream_options.include_usge", "include_usage"),
])
def test_an_unknown_field_below_the_top_level_is_named_by_its_path(body, path, near):
    with pytest.raises(BodyInvalid) as caught:
        checked(body)
    assert caught.value.path == path
    assert "unknown field" in str(caught.value)
    if near:
        assert f"did you mean {near!r}" in str(caught.value)


@pytest.mark.parametrize(("body", "path", "near"), [
    # Found by a new user's trial: "messages[0].role ... got None", "unknown content part type None".
    ({"messages": [{"rol": "user", "content": "hi"}]}, "messages[0].rol", "role"),
    ({"messages": [{"role": "user", "content": [{"typ": "text", "text": "hi"}]}]}, "messages[0].content[0].typ", "type"),
    ({**OK, "response_format": {"typ": "json_object"}}, "response_format.typ", "type"),
    ({**OK, "temprature": 0.5}, "temprature", "temperature"),
])
def test_a_misspelt_type_role_or_top_level_field_is_named_as_a_misspelling(body, path, near):
    with pytest.raises(BodyInvalid) as caught:
        checked(body)
    assert caught.value.path == path
    assert f"did you mean {near!r}" in str(caught.value)


def test_the_top_level_is_still_checked_first_and_in_the_same_shape():
    with pytest.raises(BodyInvalid) as caught:
        checked({"messages": [{"role": "user", "content": "hi", "nmae": "x"}], "temprature": 1})
    assert caught.value.path == "temprature" and "unknown request field" in str(caught.value)


def test_a_misspelling_is_named_rather_than_the_field_it_leaves_missing():
    # Checked alone, the body check would say arguments is missing.
    body = {"messages": [{"role": "assistant", "content": None, "tool_calls": [
        {**CALL, "function": {"name": "book_table", "argumnets": "{}"}}]}]}
    with pytest.raises(BodyInvalid) as caught:
        body_check(body)
    assert caught.value.path == "messages[0].tool_calls[0].function.arguments"
    with pytest.raises(BodyInvalid) as caught:
        checked(body)
    assert caught.value.path == "messages[0].tool_calls[0].function.argumnets"


@pytest.mark.parametrize("body", [
    ["not", "an", "object"],
    {"messages": "hi"},
    {"messages": [{"role": "user", "content": "hi", "k\ud800": 1}]},
    # Unhashable where a name is expected: a 400 from the body check, not a TypeError here.
    {"messages": [{"role": ["user"], "content": "hi"}]},
    {"messages": [{"role": "user", "content": [{"type": {"t": 1}}]}]},
    {**OK, "response_format": {"type": ["json_object"]}},
])
def test_what_is_not_a_field_name_is_left_to_the_body_check(body):
    request_fields_check(body)  # no unknown field to name: the body check refuses these
    with pytest.raises(BodyInvalid):
        body_check(body)




def sdk_bodies() -> list[dict[str, Any]]:
    """The JSON bodies the ``openai`` SDK sends for a spread of real calls: every message
    role with its optional fields, every content part, tools with description and strict,
    a named tool choice, stream options, and ``parse`` with a pydantic model (its
    ``response_format`` and ``pydantic_function_tool``)."""
    sent: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        message = {"role": "assistant", "content": json.dumps({"currency": "EUR", "total": 0, "line_items": []})}
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                         "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    client = openai.OpenAI(base_url="http://gateway.invalid/v1", api_key="t", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(answer)))
    messages: list[Any] = [
        {"role": "developer", "content": "Answer in Portuguese.", "name": "ops"},
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}], "name": "policy"},
        {"role": "user", "name": "ana", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERg==", "filename": "a.pdf"}},
        ]},
        {"role": "assistant", "content": None, "refusal": None, "name": "bot", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "booked"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}, {"type": "refusal", "refusal": "No."}]},
        {"role": "user", "content": "Thanks."},
    ]
    tool = {"type": "function", "function": {"name": "book_table", "description": "Book it", "parameters": BOOK, "strict": True}}
    client.chat.completions.create(model="m", messages=messages, tools=[tool],
                                   tool_choice={"type": "function", "function": {"name": "book_table"}},
                                   stream=True, stream_options={"include_usage": True}, temperature=0.2,
                                   max_tokens=50, seed=3, store=False, service_tier="auto", modalities=["text"],
                                   stop=["\n\n", "END"])
    client.chat.completions.parse(model="m", messages=[{"role": "user", "content": "Extract."}], response_format=Invoice)
    client.chat.completions.parse(model="m", messages=[{"role": "user", "content": "Extract."}],
                                  tools=[openai.pydantic_function_tool(Invoice)])
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                   response_format={"type": "json_object"})
    return sent


def test_nothing_the_openai_sdk_sends_is_refused():
    bodies = sdk_bodies()
    assert len(bodies) == 4
    for body in bodies:
        checked(body)


def test_a_reply_message_sent_back_as_the_sdk_dumps_it_passes():
    # A client keeps the conversation by appending the reply's message as the SDK
    # parsed it (model_dump), None-valued fields and all.
    reply = openai.types.chat.ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "tool_calls": [CALL]})
    checked({"messages": [*OK["messages"], reply.model_dump(), {"role": "tool", "tool_call_id": "c1", "content": "ok"}]})


CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


def captured_messages() -> list[tuple[str, dict[str, Any]]]:
    """Each real OpenRouter reply message of tests/fixtures/captures (written by others,
    not read when the lists were made), as sent back raw and as the SDK dumps it; the
    streams' messages folded from their deltas (every delta key kept)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(CAPTURES.glob("*.json")):
        body = json.loads(path.read_text())
        for choice in body.get("choices", []) if isinstance(body, dict) else []:
            out.append((f"{path.name} raw", choice["message"]))
            out.append((f"{path.name} sdk", openai.types.chat.ChatCompletion.model_validate(body).choices[0].message.model_dump()))
    for path in sorted(CAPTURES.glob("*.sse")):
        folded: dict[str, Any] = {}
        for line in path.read_text().splitlines():
            if not line.startswith("data: {"):
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                for key, value in (choice.get("delta") or {}).items():
                    if value is not None:
                        text = isinstance(value, str) and key != "role"  # text arrives in pieces
                        folded[key] = folded.get(key, "") + value if text else value
        if folded:
            out.append((f"{path.name} folded", {"role": "assistant", **folded}))
    return out


def test_every_real_reply_message_sent_back_passes():
    messages = captured_messages()
    assert len(messages) >= 8
    for name, message in messages:
        try:
            checked({"messages": [*OK["messages"], message, {"role": "user", "content": "And then?"}]})
        except BodyInvalid as exc:  # pragma: no cover - the message says which capture
            raise AssertionError(f"{name}: {exc}") from exc
