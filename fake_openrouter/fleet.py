"""Fleet files: load and strictly validate them into frozen dataclasses.

The format is the contract in ``docs/fleet-format.md`` (a copy of the team's shared file).
Strictness is the point: a typo such as ``"rte"`` must be refused, never read as a healthy host. Every refusal is a ``FleetError``
whose message starts with the JSON path of the offending value, e.g.
``models[0].endpoints[3].faults.leading_garbage.rte: unknown key``. One pass finds every
problem of a decoded file (each parser records what is wrong and goes on with a default):
the error lists them all, one ``path: problem`` line each, so a scenario author fixes a
file in one round trip.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

from core.languages import LANGUAGE_NAMES
from fake_openrouter.fleet_values import (
    FleetError,
    Problems,
    check_array,
    check_boolean,
    check_enum,
    check_integer,
    check_matching,
    check_non_negative,
    check_non_negative_int,
    check_object,
    check_positive_int,
    check_price,
    check_rate,
    check_string,
    is_int,
    is_number,
    show_value,
)

RefusalStyle = Literal["text", "empty", "content_filter", "truncated", "http_403"]
StructuredMode = Literal["ok", "fenced", "invalid_json", "missing_field", "wrong_type", "prose"]
ToolCallMode = Literal["ok", "unknown_tool", "invalid_arguments", "malformed_json", "parallel"]
UsageChunk = Literal["empty_choices", "repeat_finish", "extra_choice"]
ErrorChunk = Literal["documented", "observed"]

REFUSAL_STYLES: tuple[str, ...] = ("text", "empty", "content_filter", "truncated", "http_403")
STRUCTURED_MODES: tuple[str, ...] = ("ok", "fenced", "invalid_json", "missing_field", "wrong_type", "prose")
TOOL_CALL_MODES: tuple[str, ...] = ("ok", "unknown_tool", "invalid_arguments", "malformed_json", "parallel")
INPUT_MODALITIES: tuple[str, ...] = ("text", "image", "audio")
USAGE_CHUNKS: tuple[str, ...] = ("empty_choices", "repeat_finish", "extra_choice")
ERROR_CHUNKS: tuple[str, ...] = ("documented", "observed")
# OpenRouter's quantization enum (docs/sources/openrouter-api.md, "Provider routing", snippets/quantization-levels).
QUANTIZATIONS: tuple[str, ...] = (
    "int4", "int8", "fp4", "mxfp4", "nvfp4", "fp6", "fp8", "mxfp8", "fp16", "bf16", "fp32", "unknown",
)
# Optional per-token prices an endpoint listing may carry besides prompt/completion (OAS).
OPTIONAL_PRICES: tuple[str, ...] = (
    "request", "image", "web_search", "internal_reasoning", "input_cache_read", "input_cache_write",
)
DEFAULT_FRAGMENTS: tuple[str, ...] = (",", ".", ")")
DEFAULT_CONTEXT_LENGTH = 131072
# A healthy host's timing when the fleet says nothing: fast, so that test suites stay quick.
DEFAULT_TTFT_MS: tuple[float, float] = (20.0, 60.0)
DEFAULT_TOKENS_PER_S = 400.0
DEFAULT_PARAMETERS: tuple[str, ...] = ("max_tokens", "temperature", "top_p", "stop", "seed")
# Upper bounds that no sensible scenario reaches (docs/fleet-format.md, "Bounds"). One hour of
# first-token wait is 360 times the canary's first-token limit (10 s) and 80 times its total
# timeout (45 s); the slowest shipped host waits 14 s. Longer, a host only looks like the
# timeout fault to every client we run, at the cost of a longer keep-alive script.
MAX_TTFT_MS = 3_600_000
# Padding costs about 250 bytes of plan and one send per unit: one unit a second over the
# one-hour bound is 3600 (shipped fleets use at most 4).
MAX_PADDING_UNITS = 3600
# A stream slower than a token every 100 s never ends inside any client's limits (1e-300
# sent one token and then held the connection for ever).
MIN_TOKENS_PER_S = 0.01
# A leading-garbage fragment is junk glued to a reply's start (the field saw 1 to 5
# characters); a megabyte one only made the simulator cut it into deltas for minutes.
MAX_FRAGMENT_CHARS = 200
# A fixed reply is a real reply replayed (the longest text of tests/fixtures/real-text has
# 3,183 characters); each character is streamed, so a bound keeps the plan finite.
MAX_REPLY_CHARS = 20_000

# Used with ``fullmatch`` only: ``$`` would also match before a final newline, and a tag
# "atlas/fp8\n" would be stored and then probed as an address no listing serves.
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*")
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*")


@dataclass(frozen=True)
class Pricing:
    """USD per token. ``texts`` keeps every price exactly as written, for the listing API."""

    prompt: Decimal
    completion: Decimal
    texts: tuple[tuple[str, str], ...]


# An endpoint without ``pricing`` is free, and listed with zero prices.
FREE = Pricing(Decimal(0), Decimal(0), (("prompt", "0"), ("completion", "0")))


@dataclass(frozen=True)
class RateFault:
    """A fault that fires with probability ``rate`` (0..1) per request."""

    rate: float


@dataclass(frozen=True)
class LeadingGarbage:
    rate: float
    fragments: tuple[str, ...]


@dataclass(frozen=True)
class LanguageDrift:
    """``share`` (0..1) of the reply's sentences are replaced by sentences in ``into``."""

    rate: float
    into: str
    share: float


@dataclass(frozen=True)
class Refusal:
    rate: float
    style: RefusalStyle


@dataclass(frozen=True)
class HttpError:
    """Answer ``status`` (400..599); ``retry_after_s`` (seconds) becomes a Retry-After header."""

    rate: float
    status: int
    retry_after_s: float | None


@dataclass(frozen=True)
class Faults:
    """An endpoint's fault profile; every field's default is the healthy behaviour.

    ``ttft_ms`` is a (min, max) range in milliseconds (a single number gives min == max).
    ``tokens_per_s`` is the streaming speed after the first token (None: the fast default).
    """

    ttft_ms: tuple[float, float] | None = None
    tokens_per_s: float | None = None
    leading_garbage: LeadingGarbage | None = None
    language_drift: LanguageDrift | None = None
    mojibake: RateFault | None = None
    refusal: Refusal | None = None
    structured_output: StructuredMode = "ok"
    tool_calls: ToolCallMode = "ok"
    http_error: HttpError | None = None
    timeout: RateFault | None = None
    reset: RateFault | None = None
    midstream_error: RateFault | None = None
    truncate: RateFault | None = None
    repetition: RateFault | None = None
    down: bool = False
    template_leak: RateFault | None = None
    bpe_glyphs: RateFault | None = None
    html_body: RateFault | None = None
    cut_frame: RateFault | None = None


@dataclass(frozen=True)
class Wire:
    """Real-world quirks of OpenRouter's responses (see ``tests/fixtures/captures/INDEX.md``)."""

    usage_chunk: UsageChunk = "empty_choices"
    padding: int = 0
    comments_between: bool = False
    error_chunk: ErrorChunk = "documented"


@dataclass(frozen=True)
class Endpoint:
    """One provider's deployment of a model, addressed by ``tag`` (``slug/variant``)."""

    provider: str
    tag: str
    quantization: str | None
    supported_parameters: tuple[str, ...]
    pricing: Pricing
    context_length: int
    faults: Faults
    wire: Wire
    # Every plain-text reply's text, as given (real text replayed); None: drawn from the
    # reply language's sentences.
    reply_text: str | None = None

    @property
    def slug(self) -> str:
        """The provider slug: the part of the tag before the slash."""
        return self.tag.split("/", 1)[0]


@dataclass(frozen=True)
class Model:
    """``input_modalities``: what its prompts may carry ("text", "image", "audio")."""

    id: str
    context_length: int
    endpoints: tuple[Endpoint, ...]
    input_modalities: tuple[str, ...] = ("text",)


@dataclass(frozen=True)
class Fleet:
    seed: int
    models: tuple[Model, ...]

    def model(self, model_id: str) -> Model | None:
        """The model with this id, or None; an exact match first, then one that differs
        only in case (the canary asks for ids in their canonical lower case)."""
        folded = None
        for model in self.models:
            if model.id == model_id:
                return model
            if folded is None and model.id.casefold() == model_id.casefold():
                folded = model
        return folded


def load_fleet(path: str | Path) -> Fleet:
    """Read and validate the fleet file at ``path``.

    Raises FleetError for an unreadable file, invalid JSON (with line and column) or any
    value the format does not allow (with its JSON path).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        # The caller names the file (the command's "invalid fleet <path>: ..."): once.
        raise FleetError("", f"cannot read the file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise FleetError("", f"not UTF-8: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}") from exc
    return parse_fleet(text)


def parse_fleet(text: str) -> Fleet:
    """Validate a fleet given as JSON text. Raises FleetError (see ``load_fleet``)."""
    try:
        raw = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise FleetError(
            "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise FleetError("", "invalid JSON: arrays or objects nested too deeply") from exc
    except DuplicateKey as exc:
        raise FleetError("", f"invalid JSON: the key {exc.key!r} appears twice in one object "
                             "(the last would win, silently)") from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise FleetError("", f"invalid JSON: {exc}") from exc
    return fleet_from_dict(raw)


class DuplicateKey(ValueError):
    """A JSON object of a fleet file names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys: '"faults": {...}, "faults": {}' made a
    # faulty host healthy without a word (the format's rule against silent typos).
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def fleet_from_dict(raw: Any) -> Fleet:
    """Validate an already-decoded fleet. Raises FleetError listing every problem, each
    with its path."""
    p = Problems()
    obj = check_object(raw, "", required=("seed", "models"), optional=(), p=p)
    seed = p.field(obj, "seed", check_integer, "", 0)
    models_raw: list[Any] = p.field(obj, "models", check_array, "", [])
    models = [p.check(_model, item, f"models[{i}]", None, p) for i, item in enumerate(models_raw)]
    seen: set[str] = set()
    for i, item in enumerate(models_raw):
        model_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(model_id, str) and _MODEL_ID.fullmatch(model_id):
            if model_id in seen:
                p.found.append((f"models[{i}].id", f"duplicate model id {json.dumps(model_id)}"))
            seen.add(model_id)
    if p.found:
        raise FleetError(*p.found[0], *p.found[1:])
    return Fleet(seed=seed, models=tuple(m for m in models if m is not None))


# --- sections -------------------------------------------------------------------------------


def _model(raw: Any, path: str, p: Problems) -> Model:
    obj = check_object(raw, path, required=("id", "endpoints"), optional=("context_length", "input_modalities"), p=p)
    model_id = p.field(obj, "id", check_matching, path, "", _MODEL_ID, "author/slug")
    context_length = p.field(obj, "context_length", check_positive_int, path, DEFAULT_CONTEXT_LENGTH)
    text_only: tuple[str, ...] = ("text",)
    input_modalities = p.field(obj, "input_modalities", _modalities, path, text_only, p)
    endpoints_raw: list[Any] = p.field(obj, "endpoints", check_array, path, [])
    endpoints = [
        p.check(_endpoint, item, f"{path}.endpoints[{i}]", None, p, context_length)
        for i, item in enumerate(endpoints_raw)
    ]
    seen: set[str] = set()
    for i, item in enumerate(endpoints_raw):
        tag = item.get("tag") if isinstance(item, dict) else None
        if not isinstance(tag, str) or not _TAG.fullmatch(tag):
            continue
        # Matching is case-insensitive, so "Atlas/FP8" and "atlas/fp8" would be one address.
        if tag.lower() in seen:
            p.found.append((f"{path}.endpoints[{i}].tag", f"duplicate tag {json.dumps(tag)} in this model"))
        seen.add(tag.lower())
    return Model(
        id=model_id,
        context_length=context_length,
        endpoints=tuple(e for e in endpoints if e is not None),
        input_modalities=input_modalities,
    )


def _modalities(raw: Any, path: str, p: Problems) -> tuple[str, ...]:
    items = check_array(raw, path)
    valid = [p.check(check_enum, item, f"{path}[{i}]", "", INPUT_MODALITIES) for i, item in enumerate(items)]
    if "text" not in valid:
        raise FleetError(path, 'must include "text"')
    return tuple(dict.fromkeys(v for v in valid if v))


def _endpoint(raw: Any, path: str, p: Problems, model_context_length: int) -> Endpoint:
    obj = check_object(
        raw,
        path,
        required=("provider", "tag"),
        optional=("quantization", "supported_parameters", "pricing", "context_length", "faults", "wire",
                  "reply_text"),
        p=p,
    )
    provider = p.field(obj, "provider", check_string, path, "")
    tag = p.field(obj, "tag", check_matching, path, "", _TAG, "slug/variant")
    quantization: str | None = None
    if obj.get("quantization") is not None:
        quantization = p.field(obj, "quantization", check_enum, path, None, QUANTIZATIONS)
    return Endpoint(
        provider=provider,
        tag=tag,
        quantization=quantization,
        supported_parameters=p.field(obj, "supported_parameters", _strings, path, DEFAULT_PARAMETERS, p),
        pricing=p.field(obj, "pricing", _pricing, path, FREE, p),
        context_length=p.field(obj, "context_length", check_positive_int, path, model_context_length),
        faults=p.field(obj, "faults", _faults, path, Faults(), p),
        wire=p.field(obj, "wire", _wire, path, Wire(), p),
        reply_text=p.field(obj, "reply_text", _reply_text, path, None),
    )


def _strings(raw: Any, path: str, p: Problems) -> tuple[str, ...]:
    return tuple(p.check(check_string, item, f"{path}[{i}]", "") for i, item in enumerate(check_array(raw, path)))


def _pricing(raw: Any, path: str, p: Problems) -> Pricing:
    obj = check_object(raw, path, required=("prompt", "completion"), optional=OPTIONAL_PRICES, p=p)
    texts: list[tuple[str, str]] = []
    values: dict[str, Decimal] = {}
    for key in ("prompt", "completion", *OPTIONAL_PRICES):
        value = p.field(obj, key, check_price, path, None)
        if value is not None:
            values[key] = value
            texts.append((key, obj[key]))
    return Pricing(values.get("prompt", Decimal(0)), values.get("completion", Decimal(0)), tuple(texts))


def _faults(raw: Any, path: str, p: Problems) -> Faults:
    obj = check_object(raw, path, required=(), optional=tuple(Faults.__dataclass_fields__), p=p)
    fields: dict[str, Any] = {}
    for key in obj:
        if key in _FAULT_PARSERS:  # an unknown key is already recorded
            value = p.field(obj, key, _FAULT_PARSERS[key], path, None, p)
            if value is not None:
                fields[key] = value
    return Faults(**fields)


def _wire(raw: Any, path: str, p: Problems) -> Wire:
    obj = check_object(raw, path, required=(), optional=tuple(Wire.__dataclass_fields__), p=p)
    default = Wire()
    usage_chunk: str = default.usage_chunk
    error_chunk: str = default.error_chunk
    return Wire(
        usage_chunk=cast(UsageChunk, p.field(obj, "usage_chunk", check_enum, path, usage_chunk, USAGE_CHUNKS)),
        padding=p.field(obj, "padding", _padding, path, default.padding),
        comments_between=p.field(obj, "comments_between", check_boolean, path, default.comments_between),
        error_chunk=cast(ErrorChunk, p.field(obj, "error_chunk", check_enum, path, error_chunk, ERROR_CHUNKS)),
    )


# --- one parser per fault key (each takes the raw value, its path and the problems) ----------


def _ttft(raw: Any, path: str, p: Problems) -> tuple[float, float]:
    if isinstance(raw, list):
        if len(raw) != 2:
            raise FleetError(path, f"must be a number or [min, max], got {show_value(raw)}")
        low = p.check(_ttft_bound, raw[0], f"{path}[0]", None)
        high = p.check(_ttft_bound, raw[1], f"{path}[1]", None)
        if low is not None and high is not None and low > high:
            raise FleetError(path, f"min must not exceed max, got {show_value(raw)}")
        return (low or 0.0, high or 0.0)
    if not is_number(raw):
        raise FleetError(path, f"must be a number or [min, max], got {show_value(raw)}")
    value = _ttft_bound(raw, path)
    return (value, value)


def _ttft_bound(raw: Any, path: str) -> float:
    if not is_number(raw) or not 0 <= raw <= MAX_TTFT_MS:
        raise FleetError(path, f"must be a number between 0 and {MAX_TTFT_MS} (one hour), got {show_value(raw)}")
    return float(raw)


def _tokens_per_s(raw: Any, path: str, p: Problems) -> float:
    if not is_number(raw) or raw <= 0:
        raise FleetError(path, f"must be a positive number, got {show_value(raw)}")
    if raw < MIN_TOKENS_PER_S:
        raise FleetError(path, f"must be at least {MIN_TOKENS_PER_S} (a token every 100 s), got {show_value(raw)}")
    return float(raw)


def _rate_fault(raw: Any, path: str, p: Problems) -> RateFault:
    obj = check_object(raw, path, required=("rate",), optional=(), p=p)
    return RateFault(rate=p.field(obj, "rate", check_rate, path, 0.0))


def _leading_garbage(raw: Any, path: str, p: Problems) -> LeadingGarbage:
    obj = check_object(raw, path, required=("rate",), optional=("fragments",), p=p)
    fragments = p.field(obj, "fragments", _fragments, path, DEFAULT_FRAGMENTS, p)
    return LeadingGarbage(rate=p.field(obj, "rate", check_rate, path, 0.0), fragments=fragments)


def _fragments(raw: Any, path: str, p: Problems) -> tuple[str, ...]:
    if isinstance(raw, list) and not raw:
        raise FleetError(path, "must list at least one fragment")
    return tuple(p.check(_fragment, item, f"{path}[{i}]", "") for i, item in enumerate(check_array(raw, path)))


def _fragment(raw: Any, path: str) -> str:
    text = check_string(raw, path)
    if len(text) > MAX_FRAGMENT_CHARS:
        raise FleetError(path, f"must be at most {MAX_FRAGMENT_CHARS} characters (junk glued to a reply's start), got {len(text)}")
    return text


def _reply_text(raw: Any, path: str) -> str:
    text = check_string(raw, path)
    if len(text) > MAX_REPLY_CHARS:
        raise FleetError(path, f"must be at most {MAX_REPLY_CHARS} characters (one reply), got {len(text)}")
    return text


def _language_drift(raw: Any, path: str, p: Problems) -> LanguageDrift:
    obj = check_object(raw, path, required=("rate", "into"), optional=("share",), p=p)
    into = p.field(obj, "into", check_enum, path, "en", tuple(LANGUAGE_NAMES))
    share = p.field(obj, "share", check_rate, path, 0.5)
    return LanguageDrift(rate=p.field(obj, "rate", check_rate, path, 0.0), into=into, share=share)


def _refusal(raw: Any, path: str, p: Problems) -> Refusal:
    obj = check_object(raw, path, required=("rate", "style"), optional=(), p=p)
    style = cast(RefusalStyle, p.field(obj, "style", check_enum, path, "text", REFUSAL_STYLES))
    return Refusal(rate=p.field(obj, "rate", check_rate, path, 0.0), style=style)


def _structured_output(raw: Any, path: str, p: Problems) -> StructuredMode:
    return cast(StructuredMode, check_enum(raw, path, STRUCTURED_MODES))


def _tool_calls(raw: Any, path: str, p: Problems) -> ToolCallMode:
    return cast(ToolCallMode, check_enum(raw, path, TOOL_CALL_MODES))


def _http_status(raw: Any, path: str) -> int:
    if not is_int(raw) or not 400 <= raw <= 599:
        raise FleetError(path, f"must be an integer between 400 and 599, got {show_value(raw)}")
    return cast(int, raw)


def _http_error(raw: Any, path: str, p: Problems) -> HttpError:
    obj = check_object(raw, path, required=("rate", "status"), optional=("retry_after_s",), p=p)
    status = p.field(obj, "status", _http_status, path, 500)
    retry_after: float | None = None
    if obj.get("retry_after_s") is not None:
        retry_after = p.field(obj, "retry_after_s", check_non_negative, path, None)
    return HttpError(rate=p.field(obj, "rate", check_rate, path, 0.0), status=status, retry_after_s=retry_after)


def _down(raw: Any, path: str, p: Problems) -> bool:
    return check_boolean(raw, path)


_FAULT_PARSERS: dict[str, Callable[[Any, str, Problems], Any]] = {
    "ttft_ms": _ttft,
    "tokens_per_s": _tokens_per_s,
    "leading_garbage": _leading_garbage,
    "language_drift": _language_drift,
    "mojibake": _rate_fault,
    "refusal": _refusal,
    "structured_output": _structured_output,
    "tool_calls": _tool_calls,
    "http_error": _http_error,
    "timeout": _rate_fault,
    "reset": _rate_fault,
    "midstream_error": _rate_fault,
    "truncate": _rate_fault,
    "repetition": _rate_fault,
    "down": _down,
    "template_leak": _rate_fault,
    "bpe_glyphs": _rate_fault,
    "html_body": _rate_fault,
    "cut_frame": _rate_fault,
}


def _padding(raw: Any, path: str) -> int:
    # Negative padding keeps its former message; only the new upper bound reads differently.
    value = check_non_negative_int(raw, path)
    if value > MAX_PADDING_UNITS:
        raise FleetError(path, f"must be an integer between 0 and {MAX_PADDING_UNITS}, got {value}")
    return value
