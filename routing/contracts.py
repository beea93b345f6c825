"""Routing contracts: what a workload requires of any answer, machine-readable and
versioned. Pure: parsed from plain dicts (a JSON file, a database
row's ``spec``), never from Django models; ``contract_file_read`` reads only the file it
is given.

A contract names one workload class and everything a route and an answer must satisfy.
Units are in the field names: seconds (``_s``), tokens, characters, USD. Example::

    {"name": "invoice-extract", "version": 3, "workload": "structured",
     "output_mode": "json_schema", "output_schema": {...},
     "semantic_checks": ["invoice_totals_non_negative",
                         {"name": "line_items_sum_to_total", "params": {"tolerance": 0.01}}],
     "deadline_s": 20, "max_attempts": 2, "max_fallbacks": 1}

``contract_from_dict`` is strict: an unknown field, a wrong type or an inconsistent
combination (fallbacks without an attempt budget, hedging with side effects) raises
``ContractError`` with a message that names the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

from jsonschema import Draft202012Validator

from core.json_schema import SchemaRefused, schema_validator
from core.languages import language_of_tag
from core.strict_json import strict_loads
from routing.deadline import Allowances
from routing.semantic import SEMANTIC_CHECKS
from routing.terms import CommitMode, FinishReason, OutputMode, Workload

WORKLOADS = tuple(w.value for w in Workload)
MODALITIES = ("text", "image", "audio")
OUTPUT_MODES = tuple(m.value for m in OutputMode)
# What a contract may accept; ``error`` never is.
FINISH_REASONS = tuple(r.value for r in FinishReason if r != FinishReason.ERROR)
STREAM_COMMIT_MODES = tuple(m.value for m in CommitMode)
_STREAM_COMMIT_KEYS = frozenset({"mode", "hold_chars", "hold_ms", "early"})
# The prefix hold of a text contract without its own ``stream_commit``: enough text for the
# prefix judges (a leading fragment, a template token, a refusal opener) and short enough
# that a reader does not notice it (a few tokens at chat speed).
DEFAULT_HOLD_CHARS = 64
DEFAULT_HOLD_MS = 250.0
# gRPC A6 clamps maxAttempts to 5; the SRE book's per-request limit is 3
# (docs/sources/resilience.md, "Retries and the deadline"). We refuse more than 5 rather
# than clamping silently.
MAX_ATTEMPTS_LIMIT = 5


class ContractError(ValueError):
    """A contract that cannot be used; the message names the field and what is wrong."""


@dataclass(frozen=True)
class SemanticCheckSpec:
    """One named semantic check and its parameters (see ``routing/semantic.py``)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamCommit:
    """When a streamed answer is committed, i.e. its first byte goes to the client.

    ``buffer``: the whole answer is validated first (the reply arrives at once, as an SSE
    stream of one content chunk). ``prefix``: the first ``hold_chars`` characters of
    content or ``hold_ms`` milliseconds after the first content, whichever comes first,
    are held and judged (``routing.live_checks``); then every chunk is passed on as it
    arrives. Before the commit any failure falls back invisibly; after it, a failure ends
    the stream with an error event. ``early`` (default true): commit as soon as every
    blocking check has decided on the prefix (``routing.gateway.commit``), the hold being the
    cap; false waits for the whole hold.
    """

    mode: CommitMode = CommitMode.BUFFER
    hold_chars: int = DEFAULT_HOLD_CHARS
    hold_ms: float = DEFAULT_HOLD_MS
    early: bool = True

    @property
    def prefix(self) -> bool:
        return self.mode == CommitMode.PREFIX

    def as_dict(self) -> dict[str, Any]:
        if self.mode == CommitMode.BUFFER:
            return {"mode": CommitMode.BUFFER}
        out: dict[str, Any] = {"mode": self.mode, "hold_chars": self.hold_chars, "hold_ms": self.hold_ms}
        if not self.early:
            out["early"] = False
        return out


@dataclass(frozen=True)
class Contract:
    """One version of one workload's routing contract.

    Route requirements: ``modalities`` the input uses; ``min_context`` tokens;
    ``tools`` name -> JSON schema of the arguments; ``output_mode``/``output_schema``;
    ``model_classes`` allowed (empty = any); ``regions`` allowed (empty = any);
    ``max_cost_usd`` for the whole chain (None = no limit).
    Time: ``deadline_s`` for the whole request; allowances ``connect_s``,
    ``generation_s``, ``validation_s`` (an attempt is launched only if their sum still
    fits); ``attempt_timeout_s`` caps one attempt; ``first_token_s`` and ``idle_s`` bound
    a stream's first content byte and its silences. Every time is at most
    ``MAX_TIME_S`` (an hour).
    Answer: ``finish_reasons`` accepted (``length`` absent = truncation rejected);
    ``min_output_chars``; ``semantic_checks``.
    Retries: ``max_attempts`` for the whole chain (None only without fallbacks),
    ``max_fallbacks`` other routes (both default to the issue's policy: 3 attempts, 1
    fallback; naming fallbacks requires naming the budget), ``backoff_base_s``/``backoff_cap_s`` for full jitter.
    ``hedge`` (needs ``latency_critical`` and no ``side_effects``) starts a second route
    after ``hedge_delay_s``. ``side_effects``: an ambiguous failure is never replayed.
    Streaming: ``stream_commit`` (``StreamCommit``; default ``prefix`` for a text
    contract without structured output or tools, else ``buffer``); ``expected_language``
    (ISO 639-1) is the language a prefix must be in (a request's
    ``X-Expected-Language`` header overrides it).
    """

    name: str
    version: int
    workload: Workload
    modalities: tuple[str, ...] = ("text",)
    min_context: int = 0
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    output_mode: OutputMode = OutputMode.NONE
    output_schema: Mapping[str, Any] | None = None
    model_classes: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    max_cost_usd: float | None = None
    max_output_tokens: int | None = None
    deadline_s: float = 30.0
    connect_s: float = 0.5
    generation_s: float = 1.0
    validation_s: float = 0.1
    attempt_timeout_s: float | None = None
    first_token_s: float | None = None
    idle_s: float = 15.0
    finish_reasons: tuple[str, ...] = ("stop",)
    min_output_chars: int = 1
    semantic_checks: tuple[SemanticCheckSpec, ...] = ()
    # The default policy (issue point 5): one primary plus one fallback, plus the one
    # extra same-route retry an early connect failure may earn, all in one budget.
    max_attempts: int | None = 3
    max_fallbacks: int = 1
    backoff_base_s: float = 0.1
    backoff_cap_s: float = 2.0
    hedge: bool = False
    hedge_delay_s: float = 0.5
    latency_critical: bool = False
    side_effects: bool = False
    stream_commit: StreamCommit = field(default_factory=StreamCommit)
    expected_language: str | None = None
    # Compiled once at load: schema errors surface when the contract is loaded, and the
    # request path never recompiles a validator.
    output_validator: Draft202012Validator | None = field(default=None, compare=False, repr=False)
    tool_validators: Mapping[str, Draft202012Validator] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def allowances(self) -> Allowances:
        return Allowances(self.connect_s, self.generation_s, self.validation_s)

    @property
    def attempt_budget(self) -> int:
        """Attempts for the whole chain (issue point 5: one budget, every route)."""
        return self.max_attempts or 1

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


_SPEC_FIELDS = {f.name for f in fields(Contract)} - {"output_validator", "tool_validators"}


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ContractError(message)


# The longest time a contract may name (s): a live request's deadline, and every
# allowance within it. Past it a deadline is no deadline, and 1e300 s overflowed the
# clock's arithmetic in every attempt, which was charged to the route's breaker.
MAX_TIME_S = 3600.0


def _number(data: Mapping[str, Any], key: str, *, positive: bool = False, allow_none: bool = False) -> None:
    if key not in data:
        return
    value = data[key]
    if value is None and allow_none:
        return
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    _require(ok, f"{key}: expected a number, got {value!r}")
    _require(value > 0 if positive else value >= 0, f"{key}: must be {'> 0' if positive else '>= 0'}, got {value!r}")
    if key.endswith("_s"):
        _require(value <= MAX_TIME_S, f"{key}: at most {MAX_TIME_S:g} s (an hour), got {value!r}")


def _integer(data: Mapping[str, Any], key: str, *, minimum: int = 0, allow_none: bool = False) -> None:
    if key not in data:
        return
    value = data[key]
    if value is None and allow_none:
        return
    _require(isinstance(value, int) and not isinstance(value, bool), f"{key}: expected an integer, got {value!r}")
    _require(value >= minimum, f"{key}: must be >= {minimum}, got {value!r}")


def _strings(data: Mapping[str, Any], key: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...] | None:
    if key not in data:
        return None
    value = data[key]
    _require(
        isinstance(value, list | tuple) and all(isinstance(v, str) for v in value),
        f"{key}: expected a list of strings, got {value!r}",
    )
    if allowed is not None:
        unknown = [v for v in value if v not in allowed]
        _require(not unknown, f"{key}: unknown value(s) {unknown}; allowed: {list(allowed)}")
    return tuple(value)


def _schema_validator(schema: Any, where: str) -> Draft202012Validator:
    """The validator of the schema at ``where`` (``output_schema``, ``tools.<name>``): a
    self-contained schema, since a ``$ref`` fetched per attempt would outlive the deadline;
    formats are checked as the canary checks them (``core.json_schema``): a ``book_table``
    call whose ``time`` is prose is not a ``date-time`` and is rejected."""
    _require(isinstance(schema, dict), f"{where}: expected a JSON schema object, got {type(schema).__name__}")
    try:
        return schema_validator(schema)
    except SchemaRefused as exc:
        raise ContractError(f"{where}: {exc}") from exc


def _semantic(value: Any) -> tuple[SemanticCheckSpec, ...]:
    _require(isinstance(value, list), f"semantic_checks: expected a list, got {value!r}")
    specs = []
    for i, item in enumerate(value):
        params: dict[str, Any]
        if isinstance(item, str):
            name, params = item, {}
        elif isinstance(item, dict) and set(item) <= {"name", "params"} and isinstance(item.get("name"), str):
            name, params = item["name"], item.get("params") or {}
            _require(isinstance(params, dict), f"semantic_checks[{i}].params: expected an object")
        else:
            raise ContractError(f"semantic_checks[{i}]: expected a name or {{'name', 'params'}}, got {item!r}")
        _require(
            name in SEMANTIC_CHECKS,
            f"semantic_checks[{i}]: unknown check {name!r}; registered: {sorted(SEMANTIC_CHECKS)}",
        )
        specs.append(SemanticCheckSpec(name, params))
    return tuple(specs)


def _stream_commit(data: Mapping[str, Any], *, text_only: bool, first_token_s: float | None,
                   deadline_s: float) -> StreamCommit:
    """Parse ``stream_commit``; the hold must end before the first-token limit could fire
    (a hold past it would turn every slow start into a timeout after the first byte)."""
    if "stream_commit" not in data:
        if not text_only:
            return StreamCommit(CommitMode.BUFFER)
        # The default hold stays within half the first-token limit, however tight.
        limit_ms = (first_token_s if first_token_s is not None else deadline_s) * 1000.0
        return StreamCommit(CommitMode.PREFIX, DEFAULT_HOLD_CHARS, min(DEFAULT_HOLD_MS, limit_ms / 2))
    value = data["stream_commit"]
    _require(isinstance(value, Mapping), f"stream_commit: expected an object, got {value!r}")
    unknown = sorted(set(value) - _STREAM_COMMIT_KEYS)
    _require(not unknown, f"stream_commit: unknown field(s) {unknown}; known: {sorted(_STREAM_COMMIT_KEYS)}")
    mode = value.get("mode")
    _require(mode in STREAM_COMMIT_MODES, f"stream_commit.mode: expected one of {list(STREAM_COMMIT_MODES)}, got {mode!r}")
    if mode == CommitMode.BUFFER:
        _require(set(value) == {"mode"}, "stream_commit: hold_chars, hold_ms and early apply to mode prefix only")
        return StreamCommit(CommitMode.BUFFER)
    _integer(value, "hold_chars", minimum=1)
    _number(value, "hold_ms", positive=True)
    early = value.get("early", True)
    _require(isinstance(early, bool), f"stream_commit.early: expected true or false, got {early!r}")
    hold_chars = value.get("hold_chars", DEFAULT_HOLD_CHARS)
    hold_ms = float(value.get("hold_ms", DEFAULT_HOLD_MS))
    limit_s = first_token_s if first_token_s is not None else deadline_s
    limit_name = "first_token_s" if first_token_s is not None else "deadline_s"
    _require(hold_ms / 1000.0 < limit_s,
             f"stream_commit.hold_ms: {hold_ms:g} ms is not shorter than {limit_name} ({limit_s:g} s)")
    return StreamCommit(CommitMode.PREFIX, hold_chars, hold_ms, early)


def contract_from_dict(data: Mapping[str, Any]) -> Contract:
    """Parse and check one contract. Raises ``ContractError`` naming the bad field.

    Rejected: unknown fields; missing ``name``/``version``/``workload``; wrong types;
    ``max_fallbacks`` without ``max_attempts`` (the attempt budget); ``max_attempts``
    above 5 or below 1 (below ``1 + max_fallbacks`` is allowed: the budget may stop the
    chain early); hedging without ``latency_critical`` or with ``side_effects`` (issue point
    10); allowances that cannot fit the deadline; invalid JSON schemas and schemas with a
    ``$ref`` that does not resolve within them (never fetched); a workload class
    without its requirement (structured: a schema; tools: tools; vision: the image
    modality; long_context: ``min_context``).
    """
    if not isinstance(data, Mapping):
        raise ContractError(f"a contract is a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - _SPEC_FIELDS)
    _require(not unknown, f"unknown field(s) {unknown}; known fields: {sorted(_SPEC_FIELDS)}")
    for key in ("name", "version", "workload"):
        _require(key in data, f"{key}: required")
    name = data["name"]
    _require(isinstance(name, str) and name.strip() == name and 0 < len(name) <= 100 and "@" not in name,
             f"name: expected a non-empty string without '@' or surrounding spaces, got {name!r}")
    _integer(data, "version", minimum=1)
    _require(data["workload"] in WORKLOADS, f"workload: {data['workload']!r} is not one of {list(WORKLOADS)}")
    for key in ("deadline_s",):
        _number(data, key, positive=True)
    for key in ("connect_s", "generation_s", "validation_s", "idle_s", "hedge_delay_s", "backoff_base_s", "backoff_cap_s"):
        _number(data, key)
    for key in ("attempt_timeout_s", "first_token_s"):
        _number(data, key, positive=True, allow_none=True)
    _number(data, "max_cost_usd", allow_none=True)
    _integer(data, "min_context")
    _integer(data, "min_output_chars")
    _integer(data, "max_output_tokens", minimum=1, allow_none=True)
    _integer(data, "max_fallbacks")
    _integer(data, "max_attempts", minimum=1, allow_none=True)
    for key in ("hedge", "latency_critical", "side_effects"):
        if key in data:
            _require(isinstance(data[key], bool), f"{key}: expected true or false, got {data[key]!r}")

    kwargs: dict[str, Any] = {k: v for k, v in data.items()}
    for key, allowed in (("modalities", MODALITIES), ("finish_reasons", FINISH_REASONS),
                         ("model_classes", None), ("regions", None)):
        parsed = _strings(data, key, allowed)
        if parsed is not None:
            kwargs[key] = parsed
    if "semantic_checks" in data:
        kwargs["semantic_checks"] = _semantic(data["semantic_checks"])

    max_fallbacks = data.get("max_fallbacks", Contract.max_fallbacks)
    if "max_fallbacks" in data and max_fallbacks > 0:
        # Issue point 1: each fallback given its own retries multiplies attempts (Bifrost's
        # 3+3+3+3, docs/sources/peers.md, "Retries and fallbacks"); one explicit budget for the chain is required.
        _require(data.get("max_attempts") is not None,
                 f"max_fallbacks is {max_fallbacks} but max_attempts (the attempt budget for the whole chain) is missing")
    max_attempts = data.get("max_attempts", Contract.max_attempts)
    if max_attempts is not None:
        _require(max_attempts <= MAX_ATTEMPTS_LIMIT, f"max_attempts: at most {MAX_ATTEMPTS_LIMIT}, got {max_attempts}")

    output_mode = data.get("output_mode", OutputMode.NONE)
    _require(output_mode in OUTPUT_MODES, f"output_mode: {output_mode!r} is not one of {list(OUTPUT_MODES)}")
    if output_mode == OutputMode.JSON_SCHEMA:
        _require(data.get("output_schema") is not None, "output_schema: required when output_mode is json_schema")
    if data.get("output_schema") is not None:
        _require(output_mode == OutputMode.JSON_SCHEMA, "output_schema: given but output_mode is not json_schema")
        kwargs["output_validator"] = _schema_validator(data["output_schema"], "output_schema")

    tools = data.get("tools", {})
    _require(isinstance(tools, dict), f"tools: expected an object of tool name -> argument schema, got {tools!r}")
    kwargs["tool_validators"] = {n: _schema_validator(s, f"tools.{n}") for n, s in tools.items()}

    workload = kwargs["workload"] = Workload(data["workload"])
    kwargs["output_mode"] = OutputMode(output_mode)
    _require(workload != Workload.STRUCTURED or output_mode in (OutputMode.JSON_SCHEMA, OutputMode.JSON_OBJECT),
             "workload structured: output_mode must be json_schema or json_object")
    _require(workload != Workload.TOOLS or bool(tools), "workload tools: at least one tool is required")
    _require(workload != Workload.VISION or "image" in kwargs.get("modalities", ()),
             "workload vision: modalities must include 'image'")
    _require(workload != Workload.LONG_CONTEXT or data.get("min_context", 0) > 0,
             "workload long_context: min_context (tokens) is required")

    if data.get("hedge"):
        _require(data.get("latency_critical") is True, "hedge: only for contracts marked latency_critical")
        _require(not data.get("side_effects"), "hedge: not allowed with side_effects (both routes would act)")
        _require(max_fallbacks >= 1, "hedge: needs max_fallbacks >= 1 (the hedge is a second route)")

    first_token = data.get("first_token_s")
    kwargs["stream_commit"] = _stream_commit(
        data, text_only=output_mode == OutputMode.NONE and not tools and workload in (Workload.TEXT, Workload.LONG_CONTEXT),
        first_token_s=first_token, deadline_s=float(data["deadline_s"]) if "deadline_s" in data else Contract.deadline_s,
    )
    if data.get("expected_language") is not None:
        language = data["expected_language"]
        _require(isinstance(language, str), f"expected_language: an ISO 639-1 code such as 'pt', got {language!r}")
        try:
            kwargs["expected_language"] = language_of_tag(language)
        except ValueError as exc:
            raise ContractError(f"expected_language: {exc}") from None

    contract = Contract(**kwargs)
    _require(contract.allowances.required_s <= contract.deadline_s,
             f"connect_s + generation_s + validation_s = {contract.allowances.required_s:g} s exceeds deadline_s {contract.deadline_s:g} s: no attempt could ever start")
    _require(contract.backoff_base_s <= contract.backoff_cap_s, "backoff_base_s must not exceed backoff_cap_s")
    return contract


_MISSING = object()


class ContractFile(NamedTuple):
    """A contract file's entries (each a JSON object) and whether the file is a list."""

    entries: list[dict[str, Any]]
    listed: bool


def contract_file_read(path: str | Path) -> ContractFile:
    """The entries of the contract file at ``path`` (JSON: one contract object, or a
    non-empty list of them), each a JSON object, undecoded beyond that. Raises
    ``ContractError`` starting ``contracts file <path>:`` and saying what is wrong: a
    file that is missing or unreadable (the system's reason), not UTF-8 (the byte and its
    offset), empty, not JSON (line and column, 1-based; a ``.yaml``/``.yml`` file is told
    that contract files are JSON), JSON of another shape (``got a number (5)``), an empty
    list, or an entry that is not an object (``entry 1: expected a contract object, got a
    string ('chat')``). ``listed``: the file is a list (its entries are counted from 0
    in messages), else one object."""
    where = f"contracts file {path}"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ContractError(f"{where}: cannot read it: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(f"{where}: not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}") from exc
    if not text.strip():
        raise ContractError(f"{where}: invalid JSON at line 1, column 1: the file is empty")
    try:
        raw = strict_loads(text)
    except json.JSONDecodeError as exc:
        yaml = " (contract files are JSON, not YAML)" if Path(path).suffix.lower() in (".yaml", ".yml") else ""
        raise ContractError(f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{yaml}") from exc
    except RecursionError as exc:
        raise ContractError(f"{where}: invalid JSON: arrays or objects nested too deeply") from exc
    except ValueError as exc:  # too many digits, NaN, Infinity, 1e400 (core.strict_json)
        raise ContractError(f"{where}: invalid JSON: {exc}") from exc
    if isinstance(raw, dict):
        return ContractFile([raw], listed=False)
    if not isinstance(raw, list):
        raise ContractError(f"{where}: {FILE_FORMAT}, got {_json_kind(raw)}")
    if not raw:
        raise ContractError(f"{where}: an empty list holds no contract; {FILE_FORMAT}")
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ContractError(f"{where} entry {i}: expected a contract object, got {_json_kind(entry)}; {FILE_FORMAT}")
    return ContractFile(raw, listed=True)


FILE_FORMAT = "a contracts file holds one contract object or a JSON list of them"


def _json_kind(value: Any) -> str:
    """``a string ('abc')``, ``a number (5)``, ``a list``: a JSON value named for a message."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"a string ({shown!r})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    return "a list" if isinstance(value, list) else f"a {type(value).__name__}"


def contract_entry_check(entry: Mapping[str, Any], assigned: int) -> None:
    """Parse a contract file entry as the load would store it (version ``assigned``), so
    its first problem is named before any other rule speaks: an entry without a usable
    ``name`` hears of its unknown fields (``{"bad": 1}``: ``unknown field(s) ['bad']``)
    and of the missing name, not only that a contract needs one. Raises
    ``ContractError``; returns None for a valid contract."""
    contract_from_dict({**entry, "version": assigned})


def file_names_unique(entries: Sequence[Any]) -> None:
    """Refuse a contract file where two entries carry one ``name``: which of them would
    be the next version is not the file's to leave to load order. Raises
    ``ContractError`` naming both entries (0-based) and the name."""
    first: dict[str, int] = {}
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in first:
            raise ContractError(f"entries {first[name]} and {i} both name the contract {name!r}: one entry per name")
        first[name] = i


def file_version_check(entry: Mapping[str, Any], assigned: int) -> None:
    """Refuse a file entry whose ``version`` is not ``assigned``, the version the load
    gives it (the latest stored version when the entry equals it, the next one
    otherwise, 1 for a new name), so the number a reviewer reads in the file is the
    number callers will send in ``X-Routing-Contract``. Raises ``ContractError`` with the
    entry's name and both numbers for a mismatch, a missing or a non-integer version."""
    name = entry.get("name")
    given = entry.get("version", _MISSING)
    if given is _MISSING:
        raise ContractError(f"{name!r}: version: required; the load would assign {assigned}")
    if not isinstance(given, int) or isinstance(given, bool):
        raise ContractError(f"{name!r}: version must be an integer, got {given!r}; the load would assign {assigned}")
    if given != assigned:
        raise ContractError(f"{name!r}: version {given} in the file, but the load would assign {assigned}")


def contract_to_dict(contract: Contract) -> dict[str, Any]:
    """The JSON form of a contract (inverse of ``contract_from_dict``)."""
    out: dict[str, Any] = {}
    for f in fields(Contract):
        if f.name not in _SPEC_FIELDS:
            continue
        value = getattr(contract, f.name)
        if isinstance(value, StreamCommit):
            value = value.as_dict()
        elif isinstance(value, tuple):
            value = [
                {"name": v.name, "params": dict(v.params)} if isinstance(v, SemanticCheckSpec) else v
                for v in value
            ]
        elif isinstance(value, Mapping):
            value = dict(value)
        out[f.name] = value
    return out
