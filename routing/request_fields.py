"""The fields a gateway request may carry, at every level; any other is refused, naming it.

Unknown fields were forwarded to every route as sent: a misspelt parameter
(``temprature``) was silently ignored by one provider and refused by another (a
provider's 400 the breaker saw), and a field no route knows reached them all. Below the
top level a misspelling was as silent: ``messages[0].nmae`` lost the speaker's name,
``tools[0].function.strcit`` its strict mode. OpenAI's chat API refuses an unknown
argument with a 400 naming it; so does the gateway, at each level it knows.

The lists: OpenAI API reference, "Create chat completion" (request body), as the
``openai`` SDK's request types spell it (``openai/types/chat/*_param.py``:
``ChatCompletion*MessageParam``, ``ChatCompletionContentPart*Param``,
``ChatCompletionFunctionToolParam`` with ``FunctionDefinition``,
``ChatCompletionMessageFunctionToolCallParam``, ``ResponseFormat*``,
``ChatCompletionNamedToolChoiceParam``, ``ChatCompletionStreamOptionsParam``), and
OpenRouter's API docs, "Parameters" and "Provider routing"
(docs/sources/openrouter-api.md). An assistant message may also carry what a reply's
message holds when a client sends it back (``annotations``; OpenRouter's ``reasoning``
and ``reasoning_details``), a content part OpenRouter's ``cache_control``, a tool message
the ``name`` LangChain and LiteLLM send. Free-form objects (``metadata``, ``logit_bias``,
a schema's own keywords) and objects the gateway does not read (``audio``,
``prediction``, ``web_search_options``, ``reasoning``, ``usage``) are not walked.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from routing.request_check import BodyInvalid

OPENAI_FIELDS = frozenset({
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
})
OPENROUTER_FIELDS = frozenset({
    "models", "provider", "route", "transforms", "plugins", "reasoning", "usage", "top_k", "min_p", "top_a",
    "repetition_penalty", "debug",
})
KNOWN_FIELDS = OPENAI_FIELDS | OPENROUTER_FIELDS

_SPEAKER = frozenset({"role", "content", "name"})
MESSAGE_FIELDS: Mapping[str, frozenset[str]] = {
    "system": _SPEAKER,
    "developer": _SPEAKER,
    "user": _SPEAKER,
    "assistant": _SPEAKER | {"tool_calls", "refusal", "audio", "function_call", "annotations", "reasoning",
                             "reasoning_details"},
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
}
_PART_COMMON = frozenset({"type", "cache_control", "prompt_cache_breakpoint"})
PART_FIELDS: Mapping[str, frozenset[str]] = {
    "text": _PART_COMMON | {"text"},
    "image_url": _PART_COMMON | {"image_url"},
    "input_audio": _PART_COMMON | {"input_audio"},
    "file": _PART_COMMON | {"file"},
    "refusal": frozenset({"type", "refusal"}),
}
# A part's value object, when it is one (``image_url`` may also be a bare URL string).
PART_VALUE_FIELDS: Mapping[str, frozenset[str]] = {
    "image_url": frozenset({"url", "detail"}),
    "input_audio": frozenset({"data", "format"}),
    "file": frozenset({"file_data", "file_id", "filename"}),
}
_TEXT_ONLY_ROLES = frozenset({"system", "developer", "user", "assistant"})
TOOL_FIELDS = frozenset({"type", "function"})
FUNCTION_FIELDS = frozenset({"name", "description", "parameters", "strict"})
TOOL_CALL_FIELDS = frozenset({"id", "type", "function"})
CALL_FUNCTION_FIELDS = frozenset({"name", "arguments"})
RESPONSE_FORMAT_FIELDS: Mapping[str, frozenset[str]] = {
    "text": frozenset({"type"}),
    "json_object": frozenset({"type"}),
    "json_schema": frozenset({"type", "json_schema"}),
}
JSON_SCHEMA_FIELDS = frozenset({"name", "description", "schema", "strict"})
TOOL_CHOICE_FIELDS = frozenset({"type", "function"})
TOOL_CHOICE_FUNCTION_FIELDS = frozenset({"name"})
STREAM_OPTIONS_FIELDS = frozenset({"include_usage", "include_obfuscation"})


def request_fields_check(body: Any) -> None:
    """Raise ``BodyInvalid`` naming the first field of ``body`` no level allows: the
    top-level keys first (in sorted order, as ``"temprature"``), then, in the body's
    order, each message (``messages[0].nmae``) and its content parts and tool calls,
    each tool (``tools[0].functoin``, ``tools[0].function.strcit``), ``tool_choice``,
    ``response_format`` and ``stream_options``. Return None when every key is known.
    Runs before ``routing.request_check.body_check``, so a misspelling is named rather
    than the field it leaves missing (``argumnets``, not ``arguments: expected a
    string``); a value of an unexpected type anywhere (a body that is not an object
    included) and a key that is not valid text are left to that check, which refuses
    them."""
    if not isinstance(body, Mapping):
        return
    unknown = sorted(k for k in body if k not in KNOWN_FIELDS and _text(k))
    if unknown:
        more = f" (and {len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""
        near = difflib.get_close_matches(unknown[0], sorted(KNOWN_FIELDS), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise BodyInvalid(unknown[0], f"unknown request field{hint}{more}; an OpenAI or OpenRouter chat completion field is expected")
    messages = body.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        # Paths are built only for a message with something to name (they were most of
        # the check's CPU): a plain text message with known keys is decided here.
        role = message.get("role") if message.__class__ is dict else None
        if role.__class__ is str and role in _TEXT_ONLY_ROLES and message.get("content").__class__ is str \
                and _SPEAKER.issuperset(message):
            continue
        if isinstance(message, Mapping):
            _message(message, f"messages[{i}]")
    for i, tool in enumerate(_objects(body.get("tools"))):
        _known(tool, f"tools[{i}]", TOOL_FIELDS, "a tool")
        if isinstance(tool.get("function"), Mapping):
            _known(tool["function"], f"tools[{i}].function", FUNCTION_FIELDS, "a tool's function")
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        _known(choice, "tool_choice", TOOL_CHOICE_FIELDS, "a tool choice")
        if isinstance(choice.get("function"), Mapping):
            _known(choice["function"], "tool_choice.function", TOOL_CHOICE_FUNCTION_FIELDS, "a tool choice's function")
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping):
        _misspelt(response_format, "response_format", "type", "a response_format")
    if isinstance(response_format, Mapping) and isinstance(response_format.get("type"), str) \
            and response_format["type"] in RESPONSE_FORMAT_FIELDS:
        kind = response_format["type"]
        _known(response_format, "response_format", RESPONSE_FORMAT_FIELDS[kind], f"a {kind} response_format")
        if kind == "json_schema" and isinstance(response_format.get("json_schema"), Mapping):
            _known(response_format["json_schema"], "response_format.json_schema", JSON_SCHEMA_FIELDS, "json_schema")
    if isinstance(body.get("stream_options"), Mapping):
        _known(body["stream_options"], "stream_options", STREAM_OPTIONS_FIELDS, "stream_options")


def _objects(value: Any) -> Iterable[Mapping[str, Any]]:
    """The objects of a list, each at its own index (other items yield ``{}``: their
    type is the body check's to refuse)."""
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, Mapping) else {} for item in value]


def _message(message: Mapping[str, Any], where: str) -> None:
    role = message.get("role")
    allowed = MESSAGE_FIELDS.get(role) if isinstance(role, str) else None
    if allowed is None:
        _misspelt(message, where, "role", "a message")
        return  # an unknown role is the body check's refusal
    _known(message, where, allowed, f"a {role} message")
    if isinstance(message.get("content"), str) and "tool_calls" not in message:
        return  # plain text: no level below
    for j, part in enumerate(_objects(message.get("content"))):
        kind = part.get("type")
        if not isinstance(kind, str) or kind not in PART_FIELDS:
            _misspelt(part, f"{where}.content[{j}]", "type", "a content part")
            continue
        _known(part, f"{where}.content[{j}]", PART_FIELDS[kind], f"a {kind} content part")
        value = part.get(kind)
        if kind in PART_VALUE_FIELDS and isinstance(value, Mapping):
            _known(value, f"{where}.content[{j}].{kind}", PART_VALUE_FIELDS[kind], f"a part's {kind}")
    for j, call in enumerate(_objects(message.get("tool_calls"))):
        _known(call, f"{where}.tool_calls[{j}]", TOOL_CALL_FIELDS, "a tool call")
        if isinstance(call.get("function"), Mapping):
            _known(call["function"], f"{where}.tool_calls[{j}].function", CALL_FUNCTION_FIELDS, "a tool call's function")


def _misspelt(value: Mapping[str, Any], where: str, field: str, what: str) -> None:
    """When ``value`` lacks ``field`` but holds a key close to it (``rol``, ``typ``), raise
    ``BodyInvalid`` at that key naming it as the misspelling, not ``field`` as missing."""
    if field in value:
        return
    near = difflib.get_close_matches(field, [k for k in value if _text(k)], n=1, cutoff=0.6)
    if near:
        raise BodyInvalid(f"{where}.{near[0]}", f"unknown field (did you mean {field!r}?); {what} needs {field!r}")


def _known(value: Mapping[str, Any], where: str, allowed: frozenset[str], what: str) -> None:
    """Raise ``BodyInvalid`` at ``where.<key>`` for the first key of ``value`` (in the
    body's order) not in ``allowed``, saying what ``what`` may hold and the nearest
    allowed name when one is close (``nmae`` -> ``name``)."""
    if allowed.issuperset(value):
        return  # the common case, decided in C
    for key in value:
        if key in allowed or not _text(key):
            continue
        near = difflib.get_close_matches(str(key), sorted(allowed), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise BodyInvalid(f"{where}.{key}", f"unknown field{hint}; {what} has {', '.join(sorted(allowed))}")


def _text(key: Any) -> bool:
    """A key a message can name: a string UTF-8 can carry (a lone surrogate is the body
    check's refusal, quoted as such)."""
    if not isinstance(key, str):
        return False
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
