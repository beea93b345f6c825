"""Values a real upstream refuses are a 400 at the door naming the field (pure), and
the ones it takes pass."""

from __future__ import annotations

from typing import Any

import pytest

from routing.request_check import BodyInvalid, body_check
from routing.request_fields import request_fields_check
from routing.request_values import request_values_check

USER = {"role": "user", "content": "hi"}
OK: dict[str, Any] = {"messages": [USER]}
CALL = {"id": "c1", "type": "function", "function": {"name": "book_table", "arguments": "{}"}}
TOOL = {"type": "function", "function": {"name": "book_table", "parameters": {"type": "object"}}}


def checked(body: dict[str, Any]) -> None:
    """The edge's checks, in the gateway's order (``chat_completion_create``)."""
    request_fields_check(body)
    body_check(body)
    request_values_check(body)


# Each found by a new user's trial: accepted with a 200, or passed on to be refused upstream.
@pytest.mark.parametrize(("extra", "path", "says"), [
    ({"stop": ["x"] * 50}, "stop", "at most 4"),
    ({"stop": ["x" * 100_000]}, "stop[0]", "at most 1000 characters"),
    ({"stop": [""]}, "stop[0]", "empty stop sequence"),
    ({"stop": ""}, "stop", "empty stop sequence"),
    ({"seed": 10**30}, "seed", "64-bit"),
    ({"seed": -(2**63) - 1}, "seed", "64-bit"),
    ({"stream_options": {"include_usage": True}}, "stream_options", "stream"),
    ({"stream": False, "stream_options": {"include_usage": True}}, "stream_options", "stream"),
    ({"tools": []}, "tools", "at least one tool"),
    ({"tools": [TOOL, TOOL]}, "tools[1].function.name", "already tools[0]"),
    ({"messages": [USER, {"role": "tool", "tool_call_id": "c9", "content": "ok"}]}, "messages[1].tool_call_id",
     "answers no earlier tool call"),
    ({"messages": [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]},
                   {"role": "tool", "tool_call_id": "c2", "content": "ok"}]}, "messages[2].tool_call_id", "['c1']"),
    ({"messages": [{"role": "user", "content": ""}]}, "messages[0].content", "needs text"),
    ({"messages": [{"role": "user", "content": "   "}]}, "messages[0].content", "needs text"),
    ({"messages": [{"role": "user", "content": []}]}, "messages[0].content", "needs text"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": " "}]}]}, "messages[0].content", "needs text"),
    ({"messages": [{"role": "system", "content": ""}, USER]}, "messages[0].content", "a system message needs text"),
    ({"messages": [{"role": "developer", "content": " \n"}, USER]}, "messages[0].content", "a developer message needs text"),
    ({"messages": [{"role": "system", "content": [{"type": "text", "text": ""}]}, USER]}, "messages[0].content", "needs text"),
    ({"messages": [USER, {"role": "assistant", "content": ""}, USER]}, "messages[1].content", "an assistant message needs text"),
    ({"messages": [USER, {"role": "assistant", "content": "  "}, USER]}, "messages[1].content", "unless tool_calls"),
    ({"messages": [USER, {"role": "assistant", "content": None}, USER]}, "messages[1].content", "unless tool_calls"),
    ({"messages": [USER, {"role": "assistant"}, USER]}, "messages[1].content", "unless tool_calls"),
    ({"messages": [USER, {"role": "assistant", "content": "", "tool_calls": []}, USER]}, "messages[1].content",
     "unless tool_calls"),
    ({"messages": [USER, {"role": "assistant", "content": None, "tool_calls": None, "refusal": None}, USER]},
     "messages[1].content", "unless tool_calls"),
    ({"store": "yes"}, "store", "true or false"),
    ({"service_tier": 5}, "service_tier", "expected one of"),
    ({"service_tier": "premium"}, "service_tier", "expected one of"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": "yes"}}},
     "response_format.json_schema.strict", "true or false"),
    ({"modalities": ["audio"]}, "modalities", "text only"),
    ({"modalities": ["text", "audio"]}, "modalities", "text only"),
    ({"modalities": "text"}, "modalities", "list of strings"),
])
def test_a_value_an_upstream_refuses_is_named(extra, path, says):
    with pytest.raises(BodyInvalid) as caught:
        checked({**OK, **extra})
    assert caught.value.path == path
    assert says in str(caught.value)


@pytest.mark.parametrize("extra", [
    {"stop": ["\n", "END", "###", "User:"]},
    {"stop": "\n"},
    {"seed": 2**63 - 1},
    {"seed": -(2**63)},
    {"stream": True, "stream_options": {"include_usage": True}},
    {"stream_options": None},
    {"store": True, "service_tier": "flex", "modalities": ["text"]},
    {"tools": [TOOL]},
    {"messages": [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]},
                  {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},
    {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]},
    {"messages": [{"role": "system", "content": "Be brief."}, USER]},
    # OpenAI: an assistant's content is required unless it made tool calls; a refusal, an
    # earlier audio reply and reasoning are what a reply sent back holds instead.
    {"messages": [USER, {"role": "assistant", "content": "", "tool_calls": [CALL]},
                  {"role": "tool", "tool_call_id": "c1", "content": ""}]},
    {"messages": [USER, {"role": "assistant", "tool_calls": [CALL]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},
    {"messages": [USER, {"role": "assistant", "content": None, "refusal": "I can't help with that."}, USER]},
    {"messages": [USER, {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}, USER]},
])
def test_what_an_upstream_takes_passes(extra):
    checked({**OK, **extra})
