"""Values a real upstream refuses, refused at the gateway's door instead (pure).

``body_check`` (``routing.request_check``) settles each field's type; these are the
rules across values and fields that OpenAI's chat API (or a provider behind OpenRouter)
answers with a 400. Forwarded, each spent an attempt on a provider's refusal, or was
quietly dropped by one provider and honoured by another.

Sources: OpenAI API reference, "Create chat completion", as the ``openai`` SDK types it
(``openai/types/chat/completion_create_params.py``: ``stop`` "up to 4 sequences";
``seed`` an integer, which OpenAI reads as a signed 64-bit one; ``store`` a boolean;
``service_tier`` one of ``SERVICE_TIERS``; ``modalities`` a list of ``text``/``audio``;
``stream_options`` "only set this when you set ``stream: true``"; ``tools`` and the
messages' tool-call ids). OpenAI publishes no length for one stop sequence; the cap is
Amazon Bedrock's (``TextInferenceConfig.stopSequences``: 1 to 1000 characters each).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from routing.request_check import BodyInvalid

STOP_MAX_ITEMS = 4
STOP_MAX_CHARS = 1000
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1
SERVICE_TIERS = ("auto", "default", "flex", "scale", "priority", "fast")
# The gateway validates and returns text: an audio answer could not be judged.
MODALITIES = ("text",)


def request_values_check(body: Mapping[str, Any]) -> None:
    """Raise ``BodyInvalid`` naming the field (``stop[1]``, ``messages[3].tool_call_id``)
    and what is wrong with its value; return None when no rule above is broken.
    ``body`` has passed ``body_check`` (types are known good where it looks)."""
    _stop(body.get("stop"))
    seed = body.get("seed")
    if isinstance(seed, int) and not SEED_MIN <= seed <= SEED_MAX:
        raise BodyInvalid("seed", f"expected a 64-bit integer (from {SEED_MIN} to {SEED_MAX}), got {seed}")
    if body.get("store") is not None and not isinstance(body["store"], bool):
        raise BodyInvalid("store", f"expected true or false, got {body['store']!r}")
    tier = body.get("service_tier")
    if tier is not None and tier not in SERVICE_TIERS:
        raise BodyInvalid("service_tier", f"expected one of {list(SERVICE_TIERS)}, got {tier!r}")
    _modalities(body.get("modalities"))
    if body.get("stream_options") is not None and body.get("stream") is not True:
        raise BodyInvalid("stream_options", "only allowed with \"stream\": true (it says what a stream carries)")
    _strict(body.get("response_format"))
    _tools(body.get("tools"))
    _messages(body.get("messages") or [])


def _stop(stop: Any) -> None:
    items = [("stop", stop)] if isinstance(stop, str) else [(f"stop[{i}]", s) for i, s in enumerate(stop or [])]
    if isinstance(stop, list) and len(stop) > STOP_MAX_ITEMS:
        raise BodyInvalid("stop", f"at most {STOP_MAX_ITEMS} stop sequences, got {len(stop)}")
    for where, item in items:
        if item == "":
            raise BodyInvalid(where, "an empty stop sequence would stop before the first token")
        if len(item) > STOP_MAX_CHARS:
            raise BodyInvalid(where, f"a stop sequence is at most {STOP_MAX_CHARS} characters, got {len(item)}")


def _modalities(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
        raise BodyInvalid("modalities", f"expected a list of strings, got {value!r}")
    other = [m for m in value if m not in MODALITIES]
    if other:
        raise BodyInvalid("modalities", f"this gateway answers with text only ({list(MODALITIES)}); got {other[0]!r}")


def _strict(response_format: Any) -> None:
    spec = response_format.get("json_schema") if isinstance(response_format, Mapping) else None
    if isinstance(spec, Mapping) and spec.get("strict") is not None and not isinstance(spec["strict"], bool):
        raise BodyInvalid("response_format.json_schema.strict", f"expected true or false, got {spec['strict']!r}")


def _tools(tools: Any) -> None:
    if tools is None:
        return
    if tools == []:
        raise BodyInvalid("tools", "an empty list: send at least one tool, or omit tools")
    seen: dict[str, int] = {}
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str):
            continue  # a tool without a name is the contract check's to refuse
        if name in seen:
            raise BodyInvalid(f"tools[{i}].function.name", f"{name!r} is already tools[{seen[name]}]'s name; tool names are unique")
        seen[name] = i


# What an assistant message may say instead of text: OpenAI's chat API reference gives its
# ``content`` as "required unless tool_calls or function_call is specified"; a refusal, an
# earlier audio reply (by id) and OpenRouter's reasoning are what a reply sent back holds.
_ASSISTANT_SAYS = ("tool_calls", "function_call", "refusal", "audio", "reasoning", "reasoning_details")


def _messages(messages: list[Any]) -> None:
    """A user, system or developer message says something; an assistant message says
    something or carries what it said instead (``_ASSISTANT_SAYS``); a tool message answers
    a call an earlier assistant message made (by its ``id``). A blank system prompt was
    sent as nothing at all; a blank assistant turn is a template that lost its text (the
    host sees a turn it never wrote). A tool message may be empty: a function may return
    nothing."""
    calls: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        if role in ("user", "system", "developer") and _blank(content):
            raise BodyInvalid(f"messages[{i}].content", f"a {role} message needs text, got {content!r}")
        if role == "assistant" and _blank(content) and not any(_said(message.get(key)) for key in _ASSISTANT_SAYS):
            raise BodyInvalid(f"messages[{i}].content", f"an assistant message needs text, or the tool_calls it made "
                              f"(OpenAI: content is required unless tool_calls is given), got {content!r}")
        if role == "assistant":
            calls.update(c["id"] for c in message.get("tool_calls") or [])
        if role == "tool" and message["tool_call_id"] not in calls:
            known = f"; earlier calls: {sorted(calls)}" if calls else "; no earlier assistant message made a tool call"
            raise BodyInvalid(f"messages[{i}].tool_call_id", f"{message['tool_call_id']!r} answers no earlier tool call{known}")


def _blank(content: Any) -> bool:
    """None (absent), an empty or whitespace-only string, or a list of parts with no part
    but blank text."""
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return all(p.get("type") == "text" and not p.get("text", "").strip() for p in content)
    return False


def _said(value: Any) -> bool:
    """A field an assistant message holds instead of text, present and not blank (``null``
    and ``[]`` are what the openai SDK's ``model_dump()`` of a text reply holds)."""
    if isinstance(value, str):
        return bool(value.strip())
    return bool(value)
