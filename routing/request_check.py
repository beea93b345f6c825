"""What a caller's body must be before any route sees it, and which failures the request
itself caused (so they count against no route's circuit breaker).

Pure: no Django, no HTTP. ``body_check`` walks an already-parsed OpenAI-compatible chat
body and raises ``BodyInvalid`` naming the first bad field's path
(``messages[2].content``). It refuses what is not valid JSON text for such a body:

- a string holding a lone surrogate (``"\\ud800"``): RFC 8259 §8.2 leaves such strings'
  meaning unpredictable and UTF-8 cannot carry them; one forwarded upstream came back
  as a 500 charged to the route;
- ``NaN``, ``Infinity``, ``-Infinity``: not JSON numbers (RFC 8259 §6), though Python's
  ``json`` reads them;
- a content part of an unknown type, or a known part missing its value (OpenAI API
  reference, Chat Completions: ``text``, ``image_url``, ``input_audio``, ``file``, and
  an assistant's ``refusal``);
- a known field of the wrong type or outside its range (``temperature: "hot"``).

``check_request`` then applies the gateway's own rules under a contract (provider keys
the gateway owns, tools the contract registers, one answer per request) and raises
``RequestInvalid``; both errors become a 400 naming the field, before any upstream request.

``caused_by_request`` says whether a failure follows from the request rather than the
route: a truncation (finish reason ``length``) under the caller's own ``max_tokens``.
A context overflow (incompatible) and an upstream 4xx about the body (permanent, blamed
on the client) already count against no route (``Failure.counts_against_route``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.strict_json import NotJsonNumber
from routing.contracts import Contract
from routing.provider_prefs import ProviderInvalid, check_passed_on, constraints_of
from routing.terms import FinishReason, OutputMode
from routing.tool_schema import schema_difference

MAX_DEPTH = 64
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_PART_VALUE = {"text": "text", "image_url": "image_url", "input_audio": "input_audio", "file": "file", "refusal": "refusal"}

# Known request fields: (kind, low, high); kind "number" takes int or float, "int" an
# integer, bounds inclusive, None = unbounded. Ranges: OpenAI API reference, Chat
# Completions; OpenRouter API docs, Parameters.
_NUMBERS: dict[str, tuple[str, float | None, float | None]] = {
    "temperature": ("number", 0.0, 2.0),
    "top_p": ("number", 0.0, 1.0),
    "top_k": ("int", 0, None),
    "min_p": ("number", 0.0, 1.0),
    "top_a": ("number", 0.0, 1.0),
    "frequency_penalty": ("number", -2.0, 2.0),
    "presence_penalty": ("number", -2.0, 2.0),
    "repetition_penalty": ("number", 0.0, 2.0),
    "seed": ("int", None, None),
    "top_logprobs": ("int", 0, 20),
    # A token count a context can hold (2^31 - 1, as listings' context lengths).
    "max_tokens": ("int", 1, 2**31 - 1),
    "max_completion_tokens": ("int", 1, 2**31 - 1),
}
_BOOLEANS = ("stream", "logprobs", "parallel_tool_calls")
_OBJECTS = ("response_format", "logit_bias", "provider", "reasoning", "stream_options", "usage", "metadata")

# OpenRouter's provider-preference keys (docs/sources/openrouter-api.md, "Provider routing"). The gateway
# sets only/order/ignore/allow_fallbacks itself: it pins each route's endpoint.
PROVIDER_KEYS = frozenset({
    "require_parameters", "data_collection", "zdr", "enforce_distillable_text",
    "quantizations", "sort", "max_price", "preferred_min_throughput", "preferred_max_latency",
})
_GATEWAY_PROVIDER_KEYS = frozenset({"only", "order", "ignore", "allow_fallbacks"})
TOOL_SHAPE = '{"type": "function", "function": {"name", "description", "parameters", "strict"}}'


class RequestInvalid(ValueError):
    """The client's request is malformed: answer 400 with this message, send nothing;
    ``path`` names the field (``messages[2].role``; empty for the body as a whole)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path


class BodyInvalid(ValueError):
    """The body is not a valid request; ``path`` names the field (``messages[2].content``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path


def _walk(value: Any, path: str, depth: int) -> None:
    """Every string UTF-8-encodable, every number finite, nesting at most ``MAX_DEPTH``."""
    if depth > MAX_DEPTH:
        raise BodyInvalid(path, f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        _text(value, path)
    elif isinstance(value, float):
        if isinstance(value, NotJsonNumber):
            raise BodyInvalid(path, value.problem)
        if not math.isfinite(value):
            raise BodyInvalid(path, f"{value!r} is not a JSON number (NaN and Infinity are not JSON)")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str):
                _text(key, f"{where} (the key)")
            _walk(item, where, depth + 1)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _walk(item, f"{path}[{i}]", depth + 1)


def _fine(value: Any, depth: int) -> bool:
    """True when ``_walk`` would find nothing wrong in ``value``, decided without building
    a path for every field (the path strings were most of the edge check's CPU); False
    at the first doubt (a bad value, or a type it does not know: a tuple, a Mapping that
    is not a dict), and ``_walk`` then runs to decide and name the field."""
    if depth > MAX_DEPTH:
        return False
    kind = value.__class__
    if kind is str:
        return value.isascii() or _encodable(value)  # an ASCII string holds no surrogate
    if kind is dict:
        for key, item in value.items():
            if key.__class__ is str and not (key.isascii() or _encodable(key)):
                return False
            if not _fine(item, depth + 1):
                return False
        return True
    if kind is list:
        return all(_fine(item, depth + 1) for item in value)
    if kind is float:
        return math.isfinite(value)
    return kind is int or kind is bool or value is None


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value: str, path: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BodyInvalid(path, f"lone surrogate {value[exc.start]!r} at character {exc.start}: not valid Unicode text") from None


def _number(body: Mapping[str, Any], key: str) -> None:
    if key not in body or body[key] is None:
        return
    kind, low, high = _NUMBERS[key]
    value = body[key]
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if kind == "int" and not is_int:
        raise BodyInvalid(key, f"expected an integer, got {value!r}")
    if kind == "number" and not (is_int or isinstance(value, float)):
        raise BodyInvalid(key, f"expected a number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        # Integer bounds as integers: 2^31 - 1, not 2.14748e+09.
        bounds = " ".join(f"{word} {_bound(b)}" for word, b in (("from", low), ("to", high)) if b is not None)
        raise BodyInvalid(key, f"expected a number {bounds}, got {value!r}")


def _bound(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _content(content: Any, path: str, role: Any) -> None:
    if isinstance(content, str) or (content is None and role in ("assistant", "tool")):
        return
    if not isinstance(content, list):
        raise BodyInvalid(path, "expected a string or a list of content parts")
    for j, part in enumerate(content):
        where = f"{path}[{j}]"
        if not isinstance(part, Mapping):
            raise BodyInvalid(where, "expected a content part object")
        kind = part.get("type")
        # A list or object here is unhashable: the type test keeps it a 400, not a TypeError.
        if not isinstance(kind, str) or kind not in _PART_VALUE:
            raise BodyInvalid(f"{where}.type", f"unknown content part type {kind!r}; expected one of {sorted(_PART_VALUE)}")
        value = part.get(_PART_VALUE[kind])
        if kind in ("text", "refusal") and not isinstance(value, str):
            raise BodyInvalid(f"{where}.{kind}", "expected a string")
        if kind == "image_url" and not (isinstance(value, str) or (isinstance(value, Mapping) and isinstance(value.get("url"), str))):
            raise BodyInvalid(f"{where}.image_url", "expected an object with a string url")
        if kind in ("input_audio", "file") and not isinstance(value, Mapping):
            raise BodyInvalid(f"{where}.{kind}", "expected an object")


def _tool_calls(calls: Any, path: str) -> None:
    """An assistant message's ``tool_calls``: a list of ``{"id", "type": "function",
    "function": {"name", "arguments"}}`` with strings (OpenAI's chat API reference)."""
    if not isinstance(calls, list):
        raise BodyInvalid(path, "expected a list")
    for i, call in enumerate(calls):
        where = f"{path}[{i}]"
        if not isinstance(call, Mapping):
            raise BodyInvalid(where, "expected an object")
        if not isinstance(call.get("id"), str):
            raise BodyInvalid(f"{where}.id", f"expected a string, got {call.get('id')!r}")
        function = call.get("function")
        if not isinstance(function, Mapping):
            raise BodyInvalid(f"{where}.function", "expected an object with name and arguments")
        for key in ("name", "arguments"):
            if not isinstance(function.get(key), str):
                raise BodyInvalid(f"{where}.function.{key}", f"expected a string, got {function.get(key)!r}")


RESPONSE_FORMATS = ("text", "json_object", "json_schema")


def _response_format(value: Any) -> None:
    """``response_format``: ``{"type": "text" | "json_object"}`` or ``{"type":
    "json_schema", "json_schema": {"name", "schema"?, ...}}`` (OpenAI's structured outputs);
    anything else went upstream and came back a provider's 400 on a route."""
    if value is None:
        return
    kind = value.get("type")
    if kind not in RESPONSE_FORMATS:
        raise BodyInvalid("response_format.type", f"expected one of {list(RESPONSE_FORMATS)}, got {kind!r}")
    if kind != "json_schema":
        return
    spec = value.get("json_schema")
    if not isinstance(spec, Mapping):
        raise BodyInvalid("response_format.json_schema", "expected an object with the schema's name and schema")
    if not isinstance(spec.get("name"), str):
        raise BodyInvalid("response_format.json_schema.name", f"expected a string, got {spec.get('name')!r}")
    if spec.get("schema") is not None and not isinstance(spec["schema"], Mapping):
        raise BodyInvalid("response_format.json_schema.schema", "expected an object")


def body_check(body: Any) -> None:
    """Raise ``BodyInvalid`` (its message names the field's path) when ``body`` is not a
    valid OpenAI-compatible chat request; return None otherwise. Checks text, numbers,
    nesting, messages and content parts, and the types of the known fields; the
    gateway's own rules (provider keys, tools of the contract) are checked after."""
    if not isinstance(body, Mapping):
        raise BodyInvalid("", "the request body must be a JSON object")
    if not _fine(body, 0):
        _walk(body, "", 0)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BodyInvalid("messages", "a non-empty list of messages is required")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise BodyInvalid(where, "expected an object")
        role = message.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise BodyInvalid(f"{where}.role", f"expected one of {sorted(_ROLES)}, got {role!r}")
        _content(message.get("content"), f"{where}.content", role)
        for key in ("name", "tool_call_id"):
            if key in message and not isinstance(message[key], str):
                raise BodyInvalid(f"{where}.{key}", "expected a string")
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            # OpenAI's chat API reference: a tool message answers one call, by its id.
            raise BodyInvalid(f"{where}.tool_call_id", "required in a tool message (the id of the tool call it answers)")
        if message.get("tool_calls") is not None:
            # null is no calls: what the openai SDK's model_dump() of a reply message holds.
            _tool_calls(message["tool_calls"], f"{where}.tool_calls")
    for key in _NUMBERS:
        _number(body, key)
    for key in _BOOLEANS:
        if body.get(key) is not None and not isinstance(body[key], bool):
            raise BodyInvalid(key, f"expected true or false, got {body[key]!r}")
    for key in _OBJECTS:
        if body.get(key) is not None and not isinstance(body[key], Mapping):
            raise BodyInvalid(key, f"expected an object, got {type(body[key]).__name__}")
    _response_format(body.get("response_format"))
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or (isinstance(stop, list) and all(isinstance(s, str) for s in stop))):
        raise BodyInvalid("stop", "expected a string or a list of strings")
    if body.get("user") is not None and not isinstance(body["user"], str):
        raise BodyInvalid("user", "expected a string")
    if body.get("tools") is not None and not isinstance(body["tools"], list):
        raise BodyInvalid("tools", "expected a list")
    _tool_choice(body.get("tool_choice"), body.get("tools") or [])


TOOL_CHOICES = ("none", "auto", "required")


def _tool_choice(choice: Any, tools: list[Any]) -> None:
    """``tool_choice``: one of ``TOOL_CHOICES``, or ``{"type": "function", "function":
    {"name"}}`` naming one of the request's own tools (OpenAI's chat API reference);
    another name went upstream and came back a provider's 400."""
    if choice is None:
        return
    if isinstance(choice, str):
        if choice not in TOOL_CHOICES:
            raise BodyInvalid("tool_choice", f"expected one of {list(TOOL_CHOICES)} or an object naming a function, got {choice!r}")
        return
    if not isinstance(choice, Mapping):
        raise BodyInvalid("tool_choice", "expected a string or an object")
    function = choice.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str):
        raise BodyInvalid("tool_choice.function.name", f"expected a string, got {name!r}")
    offered = [t["function"].get("name") for t in tools if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)]
    if name not in offered:
        raise BodyInvalid("tool_choice.function.name", f"{name!r} is not one of the request's tools {offered}")


def caller_max_tokens(body: Mapping[str, Any]) -> int | None:
    """The output cap the caller set itself (``max_tokens`` or ``max_completion_tokens``),
    None when the caller set none (the contract's cap then applies)."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def caused_by_request(finish_reason: str | None, client_max_tokens: int | None) -> bool:
    """True when an answer's failure follows from the request, not the route: it was cut
    by length (finish reason ``length``) under a ``max_tokens`` the caller chose. Any
    route would have stopped there, so it says nothing about this route's health."""
    return finish_reason == FinishReason.LENGTH and client_max_tokens is not None


def check_request(body: Any, contract: Contract, *, output_contracts: Callable[[str], Sequence[str]] | None = None) -> None:
    """Reject what no route should ever see (field case 4). Raises ``RequestInvalid``
    with a message naming the field; returns None when the request is well formed.
    ``output_contracts(mode)``: the contracts (``name@version``) whose output mode is
    ``mode``, named when a ``response_format`` is refused (``response_format_check``)."""
    if not isinstance(body, dict):
        raise RequestInvalid("", "the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestInvalid("messages", "a non-empty list of messages is required")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RequestInvalid(f"messages[{i}]", "expected an object")
        if not isinstance(message.get("role"), str) or message.get("role") not in _ROLES:
            raise RequestInvalid(f"messages[{i}].role", f"expected one of {sorted(_ROLES)}, got {message.get('role')!r}")
        content = message.get("content")
        if not (isinstance(content, str | list) or (content is None and message.get("role") in ("assistant", "tool"))):
            raise RequestInvalid(f"messages[{i}].content", "expected a string or a list of parts")
    provider = body.get("provider")
    if provider is not None:
        if not isinstance(provider, dict):
            raise RequestInvalid("provider", "expected an object")
        owned = sorted(set(provider) & _GATEWAY_PROVIDER_KEYS)
        if owned:
            raise RequestInvalid(f"provider.{owned[0]}", "chosen by the gateway (each route pins its endpoint); remove it")
        unknown = sorted(set(provider) - PROVIDER_KEYS)
        if unknown:
            raise RequestInvalid("provider", f"unknown field(s) {unknown}; allowed: {sorted(PROVIDER_KEYS)}")
        try:
            constraints_of(provider)  # the preferences the gateway applies itself
            check_passed_on(provider)  # and those OpenRouter applies alone
        except ProviderInvalid as exc:
            raise RequestInvalid(exc.path, str(exc).removeprefix(f"{exc.path}: ")) from None
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestInvalid("stream", "expected true or false")
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise RequestInvalid(key, f"expected a positive integer, got {value!r}")
    if body.get("max_tokens") is not None and body.get("max_completion_tokens") is not None:
        # OpenAI's chat API reference: max_tokens is deprecated in favour of
        # max_completion_tokens; with both the cap would depend on which one each host reads.
        raise RequestInvalid("max_tokens", "give one output cap, not both: max_completion_tokens (max_tokens is "
                             "its deprecated alias)")
    n = body.get("n")
    if n not in (None, 1):
        raise RequestInvalid("n", "only 1 is supported (one answer is validated and accepted)")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise RequestInvalid("tools", "expected a list")
        for i, tool in enumerate(tools):
            name = _tool_name(tool, i)
            if name not in contract.tools:
                raise RequestInvalid(f"tools[{i}].function.name", f"tool {name!r} is not registered in contract {contract.key}; registered: {sorted(contract.tools)}")
            tool_schema_check(i, name, tool["function"].get("parameters"), contract)
    response_format_check(body.get("response_format"), contract, output_contracts)


def _tool_name(tool: Any, index: int) -> str:
    """The function name of the request's tool ``index``; raises ``RequestInvalid``
    naming what is missing or misspelt (``tools[0].functoin``), not "tool None"."""
    where = f"tools[{index}]"
    if not isinstance(tool, dict):
        raise RequestInvalid(where, f"expected a tool object {TOOL_SHAPE}, got {type(tool).__name__}")
    function = tool.get("function")
    if not isinstance(function, dict):
        stray = [k for k in tool if k not in ("type", "function")]
        if stray:
            raise RequestInvalid(f"{where}.{stray[0]}", f"unknown field; a tool is {TOOL_SHAPE}")
        raise RequestInvalid(f"{where}.function", f"required, an object; a tool is {TOOL_SHAPE}")
    name = function.get("name")
    if not isinstance(name, str):
        raise RequestInvalid(f"{where}.function.name", f"required, a string naming the tool, got {name!r}")
    return name


def response_format_check(given: Any, contract: Contract,
                          output_contracts: Callable[[str], Sequence[str]] | None = None) -> None:
    """On a contract with structured output the format is the contract's, as tools are
    (routing/README.md, "Structured output: the contract's schema, or a 400"): the caller
    omits ``response_format`` (the gateway sends the contract's) or sends the contract's
    own; with ``json_schema`` its ``schema`` must equal the contract's, annotations aside
    and local ``$ref``s read in place (``routing.tool_schema.schema_difference``). Raises
    ``RequestInvalid`` at ``response_format.type`` for another mode and at
    ``response_format.json_schema.schema`` naming the first path that differs. A contract
    without structured output takes ``{"type": "text"}`` (what it answers) and refuses
    ``json_object`` or ``json_schema`` at ``response_format.type``, naming the contracts
    of that mode (``output_contracts(mode)``): its routes were not chosen for honouring
    one and its replies are not checked against one."""
    if given is None or not isinstance(given, dict):
        return
    kind = given.get("type")
    if contract.output_mode == OutputMode.NONE:
        if kind in (OutputMode.JSON_OBJECT, OutputMode.JSON_SCHEMA):
            raise RequestInvalid("response_format.type", _no_structured_output(contract, kind, output_contracts))
        return
    if kind != contract.output_mode:
        wanted = ("its JSON schema (json_schema): send that schema unchanged"
                  if contract.output_mode == "json_schema" else "a JSON object (json_object): send {'type': 'json_object'}")
        raise RequestInvalid("response_format.type", f"contract {contract.key} answers with {wanted}, "
                             f"or omit response_format and the gateway sends it; got {kind!r}")
    if kind != "json_schema":
        return
    spec = given.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    difference = schema_difference(contract.output_schema or {}, schema if schema is not None else {})
    if difference is not None and schema is None:
        raise RequestInvalid("response_format.json_schema.schema", f"missing: contract {contract.key} answers with its "
                             "output schema; send that schema unchanged, or omit response_format and the gateway sends it")
    if difference is not None:
        path, said = difference
        raise RequestInvalid(
            "response_format.json_schema.schema",
            f"differs from contract {contract.key}'s output schema at {path} ({said}); "
            "send the contract's schema unchanged, or omit response_format and the gateway sends it",
        )


def _no_structured_output(contract: Contract, kind: str, output_contracts: Callable[[str], Sequence[str]] | None) -> str:
    """Why a ``kind`` response_format is refused under ``contract`` (no structured output),
    and where it is accepted."""
    offered = list(output_contracts(kind)) if output_contracts is not None else None
    if offered == []:
        where = f"no contract loaded here has {kind} output (a contract's output_mode makes one)"
    else:  # None: this gateway cannot list them
        where = f"send it under a contract with {kind} output" + (f" ({', '.join(offered)})" if offered else "")
    return (f"contract {contract.key} has no structured output: its routes are not chosen for honouring a {kind} "
            f"response_format and its replies are not checked against one; {where}, or omit response_format; "
            f"got {kind!r}")


def tool_schema_check(index: int, name: str, given: Any, contract: Contract) -> None:
    """A caller's schema for a tool the contract names must be the contract's
    (``routing.tool_schema``: annotations aside): a looser one would have replies judged
    by a schema the model never saw. Raises ``RequestInvalid`` naming the tool and the
    first path that differs (``tools[0].function.parameters``), or that it is missing."""
    difference = schema_difference(contract.tools[name], given if given is not None else {})
    if difference is not None and given is None:
        raise RequestInvalid(f"tools[{index}].function.parameters", f"missing: tool {name!r} takes contract "
                             f"{contract.key}'s schema; send it unchanged, or omit tools and the gateway sends it")
    if difference is not None:
        path, said = difference
        raise RequestInvalid(
            f"tools[{index}].function.parameters",
            f"tool {name!r} differs from contract {contract.key}'s schema at {path} ({said}); "
            "send the contract's schema unchanged, or omit tools and the gateway sends it",
        )
