"""Fleet files: load and strictly validate them into frozen dataclasses.

The format is the contract in ``docs/fleet-format.md`` (a copy of the team's shared file).
Strictness is the point: a typo such as ``"rte"`` must be refused, never read as a healthy host. Every refusal is a ``FleetError``
whose message starts with the JSON path of the offending value, e.g.
``models[0].endpoints[3].faults.leading_garbage.rte: unknown key``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal, cast

from canary.languages import LANGUAGE_NAMES

RefusalStyle = Literal["text", "empty", "content_filter", "truncated", "http_403"]
StructuredMode = Literal["ok", "fenced", "invalid_json", "missing_field", "wrong_type", "prose"]
ToolCallMode = Literal["ok", "unknown_tool", "invalid_arguments", "malformed_json", "parallel"]
UsageChunk = Literal["empty_choices", "repeat_finish", "extra_choice"]
ErrorChunk = Literal["documented", "observed"]

REFUSAL_STYLES: tuple[str, ...] = ("text", "empty", "content_filter", "truncated", "http_403")
STRUCTURED_MODES: tuple[str, ...] = (
    "ok",
    "fenced",
    "invalid_json",
    "missing_field",
    "wrong_type",
    "prose",
)
TOOL_CALL_MODES: tuple[str, ...] = ("ok", "unknown_tool", "invalid_arguments", "malformed_json", "parallel")
INPUT_MODALITIES: tuple[str, ...] = ("text", "image", "audio")
USAGE_CHUNKS: tuple[str, ...] = ("empty_choices", "repeat_finish", "extra_choice")
ERROR_CHUNKS: tuple[str, ...] = ("documented", "observed")
# OpenRouter's quantization enum (docs/sources/openrouter-api.md, "Provider routing", snippets/quantization-levels).
QUANTIZATIONS: tuple[str, ...] = (
    "int4",
    "int8",
    "fp4",
    "mxfp4",
    "nvfp4",
    "fp6",
    "fp8",
    "mxfp8",
    "fp16",
    "bf16",
    "fp32",
    "unknown",
)
# Optional per-token prices an endpoint listing may carry besides prompt/completion (OAS).
OPTIONAL_PRICES: tuple[str, ...] = (
    "request",
    "image",
    "web_search",
    "internal_reasoning",
    "input_cache_read",
    "input_cache_write",
)
DEFAULT_FRAGMENTS: tuple[str, ...] = (",", ".", ")")
DEFAULT_CONTEXT_LENGTH = 131072
# A healthy host's timing when the fleet says nothing: fast, so that test suites stay quick.
DEFAULT_TTFT_MS: tuple[float, float] = (20.0, 60.0)
DEFAULT_TOKENS_PER_S = 400.0

_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*$")
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*$")


class FleetError(ValueError):
    """A fleet file that cannot be used. ``path`` is the JSON path ("" for the whole file)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)


@dataclass(frozen=True)
class Pricing:
    """USD per token. ``texts`` keeps every price exactly as written, for the listing API."""

    prompt: Decimal
    completion: Decimal
    texts: tuple[tuple[str, str], ...]


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
        """The model with this id, or None."""
        for model in self.models:
            if model.id == model_id:
                return model
        return None


def load_fleet(path: str | Path) -> Fleet:
    """Read and validate the fleet file at ``path``.

    Raises FleetError for an unreadable file, invalid JSON (with line and column) or any
    value the format does not allow (with its JSON path).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FleetError("", f"cannot read fleet file {path}: {exc}") from exc
    return parse_fleet(text)


def parse_fleet(text: str) -> Fleet:
    """Validate a fleet given as JSON text. Raises FleetError (see ``load_fleet``)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FleetError(
            "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise FleetError("", "invalid JSON: arrays or objects nested too deeply") from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise FleetError("", f"invalid JSON: {exc}") from exc
    return fleet_from_dict(raw)


def fleet_from_dict(raw: Any) -> Fleet:
    """Validate an already-decoded fleet. Raises FleetError naming the offending path."""
    obj = _object(raw, "", required=("seed", "models"), optional=())
    seed = _integer(obj["seed"], "seed")
    models_raw = _array(obj["models"], "models")
    models = tuple(_model(item, f"models[{i}]") for i, item in enumerate(models_raw))
    seen: set[str] = set()
    for i, model in enumerate(models):
        if model.id in seen:
            raise FleetError(f"models[{i}].id", f"duplicate model id {json.dumps(model.id)}")
        seen.add(model.id)
    return Fleet(seed=seed, models=models)


# --- sections -------------------------------------------------------------------------------


def _model(raw: Any, path: str) -> Model:
    obj = _object(raw, path, required=("id", "endpoints"), optional=("context_length", "input_modalities"))
    model_id = _string(obj["id"], f"{path}.id")
    if not _MODEL_ID.match(model_id):
        raise FleetError(f"{path}.id", f"must look like author/slug, got {json.dumps(model_id)}")
    context_length = DEFAULT_CONTEXT_LENGTH
    if "context_length" in obj:
        context_length = _positive_int(obj["context_length"], f"{path}.context_length")
    input_modalities: tuple[str, ...] = ("text",)
    if "input_modalities" in obj:
        raw_modalities = _array(obj["input_modalities"], f"{path}.input_modalities")
        for i, item in enumerate(raw_modalities):
            _enum(item, f"{path}.input_modalities[{i}]", INPUT_MODALITIES)
        if "text" not in raw_modalities:
            raise FleetError(f"{path}.input_modalities", 'must include "text"')
        input_modalities = tuple(dict.fromkeys(raw_modalities))
    endpoints_raw = _array(obj["endpoints"], f"{path}.endpoints")
    endpoints = tuple(
        _endpoint(item, f"{path}.endpoints[{i}]", context_length)
        for i, item in enumerate(endpoints_raw)
    )
    seen: set[str] = set()
    for i, endpoint in enumerate(endpoints):
        # Matching is case-insensitive, so "Atlas/FP8" and "atlas/fp8" would be one address.
        key = endpoint.tag.lower()
        if key in seen:
            raise FleetError(
                f"{path}.endpoints[{i}].tag",
                f"duplicate tag {json.dumps(endpoint.tag)} in this model",
            )
        seen.add(key)
    return Model(id=model_id, context_length=context_length, endpoints=endpoints, input_modalities=input_modalities)


def _endpoint(raw: Any, path: str, model_context_length: int) -> Endpoint:
    obj = _object(
        raw,
        path,
        required=("provider", "tag"),
        optional=(
            "quantization",
            "supported_parameters",
            "pricing",
            "context_length",
            "faults",
            "wire",
        ),
    )
    provider = _string(obj["provider"], f"{path}.provider")
    tag = _string(obj["tag"], f"{path}.tag")
    if not _TAG.match(tag):
        raise FleetError(f"{path}.tag", f"must look like slug/variant, got {json.dumps(tag)}")
    quantization: str | None = None
    if obj.get("quantization") is not None:
        quantization = _enum(obj["quantization"], f"{path}.quantization", QUANTIZATIONS)
    params: tuple[str, ...] = ("max_tokens", "temperature", "top_p", "stop", "seed")
    if "supported_parameters" in obj:
        items = _array(obj["supported_parameters"], f"{path}.supported_parameters")
        params = tuple(
            _string(item, f"{path}.supported_parameters[{i}]") for i, item in enumerate(items)
        )
    pricing = Pricing(Decimal(0), Decimal(0), (("prompt", "0"), ("completion", "0")))
    if "pricing" in obj:
        pricing = _pricing(obj["pricing"], f"{path}.pricing")
    context_length = model_context_length
    if "context_length" in obj:
        context_length = _positive_int(obj["context_length"], f"{path}.context_length")
    faults = _faults(obj.get("faults", {}), f"{path}.faults")
    wire = _wire(obj.get("wire", {}), f"{path}.wire")
    return Endpoint(
        provider=provider,
        tag=tag,
        quantization=quantization,
        supported_parameters=params,
        pricing=pricing,
        context_length=context_length,
        faults=faults,
        wire=wire,
    )


def _pricing(raw: Any, path: str) -> Pricing:
    obj = _object(raw, path, required=("prompt", "completion"), optional=OPTIONAL_PRICES)
    texts: list[tuple[str, str]] = []
    values: dict[str, Decimal] = {}
    for key in ("prompt", "completion", *OPTIONAL_PRICES):
        if key in obj:
            values[key] = _price(obj[key], f"{path}.{key}")
            texts.append((key, obj[key]))
    return Pricing(values["prompt"], values["completion"], tuple(texts))


def _faults(raw: Any, path: str) -> Faults:
    keys = tuple(Faults.__dataclass_fields__)
    obj = _object(raw, path, required=(), optional=keys)
    fields: dict[str, Any] = {}
    for key, value in obj.items():
        parse = _FAULT_PARSERS[key]
        fields[key] = parse(value, f"{path}.{key}")
    return Faults(**fields)


def _wire(raw: Any, path: str) -> Wire:
    obj = _object(raw, path, required=(), optional=tuple(Wire.__dataclass_fields__))
    fields: dict[str, Any] = {}
    if "usage_chunk" in obj:
        fields["usage_chunk"] = _enum(obj["usage_chunk"], f"{path}.usage_chunk", USAGE_CHUNKS)
    if "padding" in obj:
        fields["padding"] = _non_negative_int(obj["padding"], f"{path}.padding")
    if "comments_between" in obj:
        fields["comments_between"] = _boolean(obj["comments_between"], f"{path}.comments_between")
    if "error_chunk" in obj:
        fields["error_chunk"] = _enum(obj["error_chunk"], f"{path}.error_chunk", ERROR_CHUNKS)
    return Wire(**fields)


# --- one parser per fault key ---------------------------------------------------------------


def _ttft(raw: Any, path: str) -> tuple[float, float]:
    if isinstance(raw, list):
        if len(raw) != 2:
            raise FleetError(path, f"must be a number or [min, max], got {_show(raw)}")
        low = _non_negative(raw[0], f"{path}[0]")
        high = _non_negative(raw[1], f"{path}[1]")
        if low > high:
            raise FleetError(path, f"min must not exceed max, got {_show(raw)}")
        return (low, high)
    if not _is_number(raw):
        raise FleetError(path, f"must be a number or [min, max], got {_show(raw)}")
    value = _non_negative(raw, path)
    return (value, value)


def _tokens_per_s(raw: Any, path: str) -> float:
    if not _is_number(raw) or raw <= 0:
        raise FleetError(path, f"must be a positive number, got {_show(raw)}")
    return float(raw)


def _rate_fault(raw: Any, path: str) -> RateFault:
    obj = _object(raw, path, required=("rate",), optional=())
    return RateFault(rate=_rate(obj["rate"], f"{path}.rate"))


def _leading_garbage(raw: Any, path: str) -> LeadingGarbage:
    obj = _object(raw, path, required=("rate",), optional=("fragments",))
    fragments = DEFAULT_FRAGMENTS
    if "fragments" in obj:
        items = _array(obj["fragments"], f"{path}.fragments")
        if not items:
            raise FleetError(f"{path}.fragments", "must list at least one fragment")
        fragments = tuple(_string(item, f"{path}.fragments[{i}]") for i, item in enumerate(items))
    return LeadingGarbage(rate=_rate(obj["rate"], f"{path}.rate"), fragments=fragments)


def _language_drift(raw: Any, path: str) -> LanguageDrift:
    obj = _object(raw, path, required=("rate", "into"), optional=("share",))
    into = _enum(obj["into"], f"{path}.into", tuple(LANGUAGE_NAMES))
    share = 0.5
    if "share" in obj:
        share = _rate(obj["share"], f"{path}.share")
    return LanguageDrift(rate=_rate(obj["rate"], f"{path}.rate"), into=into, share=share)


def _refusal(raw: Any, path: str) -> Refusal:
    obj = _object(raw, path, required=("rate", "style"), optional=())
    style = cast(RefusalStyle, _enum(obj["style"], f"{path}.style", REFUSAL_STYLES))
    return Refusal(rate=_rate(obj["rate"], f"{path}.rate"), style=style)


def _structured_output(raw: Any, path: str) -> StructuredMode:
    return cast(StructuredMode, _enum(raw, path, STRUCTURED_MODES))


def _tool_calls(raw: Any, path: str) -> ToolCallMode:
    return cast(ToolCallMode, _enum(raw, path, TOOL_CALL_MODES))


def _http_error(raw: Any, path: str) -> HttpError:
    obj = _object(raw, path, required=("rate", "status"), optional=("retry_after_s",))
    status = obj["status"]
    if not _is_int(status) or not 400 <= status <= 599:
        raise FleetError(
            f"{path}.status", f"must be an integer between 400 and 599, got {_show(status)}"
        )
    retry_after: float | None = None
    if obj.get("retry_after_s") is not None:
        retry_after = _non_negative(obj["retry_after_s"], f"{path}.retry_after_s")
    return HttpError(
        rate=_rate(obj["rate"], f"{path}.rate"), status=status, retry_after_s=retry_after
    )


def _down(raw: Any, path: str) -> bool:
    return _boolean(raw, path)


_FAULT_PARSERS: dict[str, Callable[[Any, str], Any]] = {
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
}


# --- primitive checks -----------------------------------------------------------------------


def _show(value: Any) -> str:
    """A value as the fleet author wrote it (JSON), for error messages."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _is_int(value: Any) -> bool:
    # JSON true/false decode to bool, which is an int subclass in Python: not a number here.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and value == value  # NaN != NaN


def _object(
    raw: Any, path: str, *, required: tuple[str, ...], optional: tuple[str, ...]
) -> Mapping[str, Any]:
    where = path or "fleet"
    if not isinstance(raw, dict):
        raise FleetError(path, f"{where} must be an object, got {_show(raw)}")
    for key in raw:
        if key not in required and key not in optional:
            raise FleetError(_join(path, key), "unknown key")
    for key in required:
        if key not in raw:
            raise FleetError(_join(path, key), "required key is missing")
    return cast(Mapping[str, Any], raw)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _array(raw: Any, path: str) -> list[Any]:
    if not isinstance(raw, list):
        raise FleetError(path, f"must be an array, got {_show(raw)}")
    return raw


def _string(raw: Any, path: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise FleetError(path, f"must be a non-empty string, got {_show(raw)}")
    return raw


def _boolean(raw: Any, path: str) -> bool:
    if not isinstance(raw, bool):
        raise FleetError(path, f"must be true or false, got {_show(raw)}")
    return raw


def _integer(raw: Any, path: str) -> int:
    if not _is_int(raw):
        raise FleetError(path, f"must be an integer, got {_show(raw)}")
    return cast(int, raw)


def _positive_int(raw: Any, path: str) -> int:
    if not _is_int(raw) or raw <= 0:
        raise FleetError(path, f"must be a positive integer, got {_show(raw)}")
    return cast(int, raw)


def _non_negative_int(raw: Any, path: str) -> int:
    if not _is_int(raw) or raw < 0:
        raise FleetError(path, f"must be an integer >= 0, got {_show(raw)}")
    return cast(int, raw)


def _non_negative(raw: Any, path: str) -> float:
    if not _is_number(raw) or raw < 0:
        raise FleetError(path, f"must be a number >= 0, got {_show(raw)}")
    return float(raw)


def _rate(raw: Any, path: str) -> float:
    if not _is_number(raw) or not 0 <= raw <= 1:
        raise FleetError(path, f"must be a number between 0 and 1, got {_show(raw)}")
    return float(raw)


def _enum(raw: Any, path: str, allowed: tuple[str, ...]) -> str:
    if raw not in allowed or not isinstance(raw, str):
        raise FleetError(path, f"must be one of {', '.join(allowed)}, got {_show(raw)}")
    return raw


def _price(raw: Any, path: str) -> Decimal:
    # Prices are strings, as OpenRouter serves them: a float would lose the exact digits.
    if not isinstance(raw, str):
        raise FleetError(path, f'must be a decimal string such as "0.0000004", got {_show(raw)}')
    try:
        value = Decimal(raw)
    except InvalidOperation as exc:
        raise FleetError(path, f"must be a decimal string, got {_show(raw)}") from exc
    if not value.is_finite() or value < 0:
        raise FleetError(path, f"must be a finite decimal >= 0, got {_show(raw)}")
    return value
