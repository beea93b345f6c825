"""Judge one reply outside a probe: the judgement a probe would give the same text.

Used by ``manage.py judge_text`` (JSON lines on stdin) and the user-report page (a pasted
reply). Pure: no Django, no I/O besides ``load_schema`` reading the file it is given.
The reply is judged as a completed generation (``finish_reason`` ``stop``), through the
same judge functions the probes call (``canary.probes``):

- ``refusal``: ``judge_refusal(reply, language)``;
- ``language``: ``judge_language(reply, language)``;
- ``corruption``: ``judge_corruption(reply)``;
- ``leading``: ``judge_leading_garbage([leading_signature(text)])``: with a single reply
  an odd opener is at most ``inconclusive`` (the rule needs it in 2 of 3 replies);
- ``structured``: ``judge_structured(reply, schema)``, the probe's character-state schema
  unless another is given;
- ``all``: the five above (``structured`` only with a schema given, else
  ``not_applicable``); the line's verdict is the worst of them.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from canary.judges.corruption import judge_corruption
from canary.judges.language import judge_language
from canary.judges.leading import judge_leading_garbage, leading_signature
from canary.judges.refusal import judge_refusal
from canary.judges.schemas import SchemaRefused, schema_validator
from canary.judges.structured import judge_structured
from canary.prompts import STATE_SCHEMA
from canary.verdicts import Judgement, Reply, Verdict, worst
from core.languages import LANGUAGE_NAMES, validate_language
from core.strict_json import strict_loads

CHECKS: tuple[str, ...] = ("refusal", "language", "corruption", "leading", "structured")
CHOICES: tuple[str, ...] = (*CHECKS, "all")
MAX_SCHEMA_BYTES = 1_000_000


class InputError(ValueError):
    """A bad input line, language or schema file; the message names the problem."""


def load_schema(path: str | Path) -> dict[str, Any]:
    """Read a JSON Schema (Draft 2020-12) from ``path``.

    Raises InputError when the file is missing, unreadable, larger than 1 MB, not JSON
    (or nested too deeply to read), not an object, or not a usable schema
    (``canary.judges.schemas.schema_validator``: invalid, nested too deeply to check, or
    a ``$ref`` that does not resolve within the file, since references are never fetched).
    """
    file = Path(path)
    try:
        size = file.stat().st_size
        text = file.read_text(encoding="utf-8") if size <= MAX_SCHEMA_BYTES else ""
    except OSError as exc:
        raise InputError(f"cannot read schema file {file}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"schema file {file} is not JSON: {exc}") from exc
    # Outside the try: InputError is a ValueError, which would read as "not JSON".
    if size > MAX_SCHEMA_BYTES:
        raise InputError(f"schema file {file} is larger than {MAX_SCHEMA_BYTES} bytes")
    try:
        schema = strict_loads(text)
    except ValueError as exc:
        raise InputError(f"schema file {file} is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise InputError(f"schema file {file} is not JSON: arrays or objects nested too deeply") from exc
    if not isinstance(schema, dict):
        raise InputError(f"schema file {file} must hold a JSON object, not {type(schema).__name__}")
    try:
        schema_validator(schema)
    except SchemaRefused as exc:
        raise InputError(f"schema file {file}: {exc}") from exc
    return schema


def judge_reply(
    text: str | None, check: str, language: str = "en", schema: dict[str, Any] | None = None
) -> list[Judgement]:
    """The judgements of ``check`` (one of ``CHOICES``) on ``text`` in ``language``;
    ``text`` None is a reply whose content was null, as a probe sees one.

    Returns one judgement, or five for ``all`` (in ``CHECKS`` order). Raises InputError
    for an unknown check or language.
    """
    if check not in CHOICES:
        raise InputError(f"unknown check {check!r}; expected one of {', '.join(CHOICES)}")
    try:
        code = validate_language(language)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    reply = Reply(content=text, finish_reason="stop")
    judges = {
        "refusal": lambda: judge_refusal(reply, code),
        "language": lambda: judge_language(reply, code),
        "corruption": lambda: judge_corruption(reply),
        "leading": lambda: judge_leading_garbage([leading_signature(text)]),
        "structured": lambda: judge_structured(reply, STATE_SCHEMA if schema is None else schema),
    }
    if check == "all" and schema is None:
        # A prose reply is not JSON: like a probe on an endpoint without structured
        # outputs, "all" leaves the structured check out unless a schema is given.
        judges["structured"] = lambda: Judgement(
            Verdict.NOT_APPLICABLE, "structured_output", "No schema given: not judged.", {}
        )
    return [judges[name]() for name in (CHECKS if check == "all" else (check,))]


def as_row(judgements: list[Judgement], check: str) -> dict[str, Any]:
    """One output row: ``judge`` (the requested check), and ``check``, ``verdict``,
    ``reason``, ``evidence`` of the deciding judgement (the worst, for ``all``, which
    also lists every judgement under ``judgements``)."""
    decided = worst(judgements)
    row: dict[str, Any] = {"judge": check, **_plain(decided)}
    if check == "all":
        row["judgements"] = [_plain(j) for j in judgements]
    return row


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:80]
    except RecursionError:
        # A value the decoder could just read may be too deep to encode back.
        return f"a {'list' if isinstance(value, list) else 'object'} nested too deeply to show"


LINE_KEYS = frozenset({"text", "language"})


def judge_line(
    line: str | bytes, check: str, default_language: str = "en", schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Judge one JSON line ``{"text": ..., "language": ...}``: ``text`` a string, or null
    for a reply with null content; ``language`` optional (absent, null or "" is
    ``default_language``). Bytes are decoded as UTF-8 (a byte-order mark is allowed).

    Returns ``as_row(...)``, or ``{"error": "..."}`` naming what is wrong with the line
    (an unknown key, not UTF-8, not JSON by RFC 8259 (``core.strict_json``: NaN, Infinity and numbers past
    a float's range included) or nested too deeply, not an object, no ``text``, a
    ``text`` or ``language`` of the wrong type, with its value, an unknown language);
    never raises for bad input.
    """
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return {"error": f"not UTF-8: byte 0x{line[exc.start]:02x} at offset {exc.start}"}
    try:
        record = strict_loads(line.strip().lstrip("\ufeff"))
    except ValueError as exc:
        return {"error": f"not JSON: {exc}"}
    except RecursionError:
        # json's decoder recurses per level of nesting; past the interpreter's limit the
        # line is refused like any other unreadable line, and the run goes on.
        return {"error": "not JSON: arrays or objects nested too deeply"}
    if not isinstance(record, dict):
        return {"error": f"expected a JSON object, got {type(record).__name__}"}
    unknown = sorted(k for k in record if k not in LINE_KEYS)
    if unknown:
        # A misspelt "language" was ignored and the text judged in the default language.
        near = difflib.get_close_matches(unknown[0], sorted(LINE_KEYS), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return {"error": f"unknown key {_show(unknown[0])}{hint}; a line has \"text\" and an optional \"language\""}
    if "text" not in record:
        return {"error": 'missing "text" (a string)'}
    text = record["text"]
    if text is not None and not isinstance(text, str):
        return {"error": f'"text" must be a string or null, got {_show(text)}'}
    language = record.get("language")
    if language is None or language == "":
        language = default_language
    if not isinstance(language, str):
        return {"error": f'"language" must be a language code (a string), got {_show(language)}'}
    if language.strip().lower() not in LANGUAGE_NAMES:
        return {
            "error": f"unknown language {language!r}; expected one of {', '.join(LANGUAGE_NAMES)}"
        }
    try:
        return as_row(judge_reply(text, check, language, schema), check)
    except InputError as exc:
        return {"error": str(exc)}


def judge_pasted(text: str, language: str = "") -> dict[str, Any]:
    """Every check on a reply pasted into the user-report page (``language`` empty →
    English): ``as_row(..., "all")``, or ``{"error": ...}`` for an unknown language."""
    try:
        return as_row(judge_reply(text, "all", language or "en"), "all")
    except InputError as exc:
        return {"error": str(exc)}


def _plain(judgement: Judgement) -> dict[str, Any]:
    return {
        "check": judgement.check,
        "verdict": judgement.verdict.value,
        "reason": judgement.reason,
        "evidence": judgement.evidence,
    }
