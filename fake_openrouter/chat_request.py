"""Parse and validate a POST /chat/completions body into a ``ChatRequest``.

Malformed input never raises anything but ``RequestError``, which carries OpenRouter's error
body, so the server always answers a bad request with a 400 instead of crashing.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from core.languages import LANGUAGE_NAMES
from fake_openrouter.draws import request_digest
from fake_openrouter.preferences import ProviderPreferences, parse_preferences
from fake_openrouter.wire import error_body

# Request parameters that endpoints advertise in ``supported_parameters`` (OAS ``Parameter``).
# ``stream`` is not among them: every endpoint streams, so it never filters routing.
KNOWN_PARAMETERS: frozenset[str] = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "top_a",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "max_tokens",
        "max_completion_tokens",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "prediction",
        "seed",
        "stop",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "include_reasoning",
        "reasoning",
        "reasoning_effort",
        "web_search_options",
        "verbosity",
    }
)
RESPONSE_FORMAT_TYPES: frozenset[str] = frozenset(
    {"text", "json_object", "json_schema", "grammar", "python"}
)
_LANGUAGE_PATTERNS = {
    code: re.compile(rf"\b{name}\b", re.IGNORECASE) for code, name in LANGUAGE_NAMES.items()
}


class RequestError(Exception):
    """A request OpenRouter would refuse: ``status`` and the JSON ``body`` to answer with."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("error", {}).get("message", "bad request"))
        self.status = status
        self.body = body


@dataclass(frozen=True)
class ChatRequest:
    """What the simulator needs from a chat request.

    ``required_parameters``: the ``supported_parameters`` names an endpoint must list to serve
    this request under ``require_parameters``. ``json_schema``: the schema object of a
    ``json_schema`` response format, else None. ``prompt_chars``: characters of all message
    text (tokens are estimated as characters / 4). ``language``: the reply language code.
    ``tools``: (name, parameters schema) of each function tool offered; ``tool_choice``:
    "auto" (also when absent), "none", "required", or the name of the forced function.
    """

    model_id: str
    messages: tuple[dict[str, Any], ...]
    stream: bool
    max_tokens: int | None
    response_format_type: str | None
    json_schema: dict[str, Any] | None
    provider: ProviderPreferences
    required_parameters: frozenset[str]
    language: str
    prompt_text: str
    last_user_text: str
    digest: str
    tools: tuple[tuple[str, dict[str, Any]], ...] = ()
    tool_choice: str = "auto"
    images: bool = False
    # The request's stop sequences: the reply ends before the first one (OpenAI's chat API).
    stop: tuple[str, ...] = ()


def bad_request(message: str) -> RequestError:
    """A 400 with OpenRouter's envelope."""
    return RequestError(400, error_body(400, message))


def parse_chat_request(raw: bytes) -> ChatRequest:
    """Validate a request body. Raises RequestError (400) with OpenRouter's error body."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad_request(f"Invalid JSON in request body: {exc}") from exc
    if not isinstance(body, dict):
        raise bad_request("Request body must be a JSON object")
    model_id = body.get("model")
    if not isinstance(model_id, str) or not model_id:
        raise bad_request("No models provided")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request('Input required: specify "prompt" or "messages"')
    texts: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise bad_request(f"messages[{i}]: expected an object with a string role")
        texts.append((message["role"], _content_text(message.get("content"), i)))
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise bad_request("stream: expected a boolean")
    max_tokens = _max_tokens(body)
    response_format = body.get("response_format")
    rf_type, schema = _response_format(response_format)
    provider = parse_preferences(body.get("provider"))
    required = {key for key in body if key in KNOWN_PARAMETERS and body[key] is not None}
    if rf_type == "json_schema":
        required.add("structured_outputs")
    elif rf_type in ("json_object", "grammar", "python"):
        required.add("response_format")
    user_texts = [text for role, text in texts if role == "user"]
    images = any(
        isinstance(m.get("content"), list)
        and any(isinstance(p, dict) and p.get("type") == "image_url" for p in m["content"])
        for m in messages
    )
    tools = _tools(body.get("tools"))
    tool_choice = _tool_choice(body.get("tool_choice"), tools)
    stop_raw = body.get("stop")
    if isinstance(stop_raw, str):
        stop_raw = [stop_raw]
    if stop_raw is not None and not (isinstance(stop_raw, list) and all(isinstance(x, str) for x in stop_raw)):
        raise bad_request("stop: expected a string or a list of strings")
    return ChatRequest(
        stop=tuple(x for x in (stop_raw or ()) if x),
        tools=tools,
        tool_choice=tool_choice,
        images=images,
        model_id=model_id,
        messages=tuple(messages),
        stream=stream,
        max_tokens=max_tokens,
        response_format_type=rf_type,
        json_schema=schema,
        provider=provider,
        required_parameters=frozenset(required),
        language=reply_language(texts),
        prompt_text="\n".join(text for _, text in texts),
        last_user_text=user_texts[-1] if user_texts else texts[-1][1],
        digest=request_digest(messages, response_format),
    )


def reply_language(texts: list[tuple[str, str]]) -> str:
    """The language a prompt asks for: the first English language name found in a system
    message (the earliest in the text), else in any message; "en" when none is named.

    ``texts`` is [(role, text)] in message order. Prompts under ``_CACHED_PROMPT_CHARS``
    are remembered (a canary round sends the same few prompts hundreds of times, and the
    search runs one pattern per language).
    """
    key = tuple(texts)
    if sum(len(text) for _, text in key) <= _CACHED_PROMPT_CHARS:
        return _reply_language_cached(key)
    return _reply_language(key)


_CACHED_PROMPT_CHARS = 16_384


def _reply_language(texts: tuple[tuple[str, str], ...]) -> str:
    system = [text for role, text in texts if role in ("system", "developer")]
    for text in [*system, *(text for _, text in texts)]:
        found = [
            (match.start(), code)
            for code, pattern in _LANGUAGE_PATTERNS.items()
            if (match := pattern.search(text))
        ]
        if found:
            return min(found)[1]
    return "en"


_reply_language_cached = functools.lru_cache(maxsize=512)(_reply_language)


def _content_text(content: Any, index: int) -> str:
    """Message content as text: a string, a list of parts ({type:"text", text}), or null."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict):
                raise bad_request(f"messages[{index}].content: expected content parts")
            if isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    raise bad_request(f"messages[{index}].content: expected a string or a list of parts")


def _tools(value: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The function tools of a request: [{"type": "function", "function": {"name",
    "parameters"?}}]; anything else is a 400, as OpenRouter answers it."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise bad_request("tools: expected a list of tools")
    tools = []
    for i, tool in enumerate(value):
        function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise bad_request(f"tools[{i}]: expected {{type: function, function: {{name, parameters}}}}")
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, dict):
            raise bad_request(f"tools[{i}].function.parameters: expected a JSON schema object")
        tools.append((function["name"], parameters))
    return tuple(tools)


def _tool_choice(value: Any, tools: tuple[tuple[str, dict[str, Any]], ...]) -> str:
    if value is None:
        return "auto"
    if value in ("auto", "none", "required"):
        return str(value)
    function = value.get("function") if isinstance(value, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or name not in {n for n, _ in tools}:
        raise bad_request("tool_choice: expected auto, none, required or a function among tools")
    return name


def _max_tokens(body: dict[str, Any]) -> int | None:
    for key in ("max_tokens", "max_completion_tokens"):
        value: object = body.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad_request(f"{key}: expected a positive integer")
        return value
    return None


def _response_format(value: Any) -> tuple[str | None, dict[str, Any] | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict) or value.get("type") not in RESPONSE_FORMAT_TYPES:
        raise bad_request(
            "response_format: expected an object whose type is one of "
            + ", ".join(sorted(RESPONSE_FORMAT_TYPES))
        )
    rf_type = str(value["type"])
    if rf_type != "json_schema":
        return rf_type, None
    config = value.get("json_schema")
    if not isinstance(config, dict) or not isinstance(config.get("name"), str):
        raise bad_request("response_format.json_schema: expected an object with a name")
    schema = config.get("schema", {})
    if not isinstance(schema, dict):
        raise bad_request("response_format.json_schema.schema: expected an object")
    return rf_type, schema
