"""Validate before accept. Pure.

Every answer, the primary's included, passes here before it is cached, counted as a
success or handed to a tool executor. In order:

1. finish reason: one the contract accepts (``length`` = truncation is rejected unless the
   contract lists it; a missing finish reason is never accepted);
2. output present and at least ``min_output_chars`` long (tool-call answers excepted);
3. structured output: parses as JSON and validates against the contract's *original*
   schema (required fields, enums, types, invariants the schema states);
4. tool calls: only registered names; arguments parse as JSON and validate against each
   tool's schema;
5. named semantic checks from ``routing/semantic.py``.

The only normalisation is stripping surrounding whitespace from text. Nothing is
guessed: a missing field stays missing (and fails), fenced JSON is not unwrapped, tool
arguments are never rewritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from routing.contracts import Contract
from routing.semantic import SEMANTIC_CHECKS
from routing.stream import Answer
from routing.terms import FinishReason, OutputMode

_MAX_PROBLEMS = 10
_MAX_MESSAGE_CHARS = 200


@dataclass(frozen=True)
class ValidationResult:
    """``ok`` when no problem was found; ``problems`` are short sentences naming the
    field; ``value`` is the parsed structured output (dict/list) or the stripped text."""

    ok: bool
    problems: tuple[str, ...]
    value: Any = None

    @property
    def summary(self) -> str:
        return "passed" if self.ok else "; ".join(self.problems)


def _schema_problems(validator: Any, instance: Any, where: str) -> list[str]:
    """One problem per schema error: ``"<where> <JSON path>: <validator's message>"``,
    e.g. ``output $.line_items[2].amount: '12,50' is not of type 'number'``; the message
    is clipped, since it quotes the offending value."""
    problems = []
    try:
        for error in validator.iter_errors(instance):
            message = error.message
            if len(message) > _MAX_MESSAGE_CHARS:
                message = message[: _MAX_MESSAGE_CHARS - 1] + "…"
            problems.append(f"{where} {error.json_path}: {message}")
            if len(problems) >= _MAX_PROBLEMS:
                break
    except RecursionError:
        # The validator recurses per level: a value nested deeper than it can walk is
        # refused, never a crash of the request.
        problems.append(f"{where}: nested too deeply to validate")
    return problems


def validate_answer(contract: Contract, answer: Answer) -> ValidationResult:
    """Check ``answer`` against ``contract``; never raises on what the model sent."""
    problems: list[str] = []
    finish = answer.finish_reason
    if finish is None:
        problems.append("no finish reason: the answer may be incomplete")
    elif finish not in contract.finish_reasons:
        label = "truncated (finish_reason length)" if finish == FinishReason.LENGTH else f"finish_reason {finish!r}"
        problems.append(f"{label} not accepted; contract accepts {list(contract.finish_reasons)}")

    text = (answer.content or "").strip()
    value: Any = text
    if answer.tool_calls:
        problems += _tool_problems(contract, answer)
    elif len(text) < contract.min_output_chars:
        problems.append(f"output is {len(text)} characters, contract requires at least {contract.min_output_chars}")

    if contract.output_mode in (OutputMode.JSON_SCHEMA, OutputMode.JSON_OBJECT) and not answer.tool_calls and text:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"structured output is not JSON ({exc.msg} at char {exc.pos})")
            value = None
        except RecursionError:
            problems.append("structured output is JSON nested too deeply to decode")
            value = None
        else:
            if contract.output_mode == OutputMode.JSON_OBJECT and not isinstance(value, dict):
                problems.append(f"structured output is a {type(value).__name__}, not an object")
            if contract.output_validator is not None:
                problems += _schema_problems(contract.output_validator, value, "output")

    if not problems:
        for spec in contract.semantic_checks:
            check = SEMANTIC_CHECKS[spec.name]
            try:
                found = check(value, spec.params)
            except Exception as exc:  # noqa: BLE001 - a buggy check must fail the answer, not the request
                found = [f"check crashed: {type(exc).__name__}: {exc}"]
            problems += [f"{spec.name}: {p}" for p in found]
    return ValidationResult(not problems, tuple(problems[:_MAX_PROBLEMS]), value if not problems else None)


def _tool_problems(contract: Contract, answer: Answer) -> list[str]:
    problems: list[str] = []
    for i, call in enumerate(answer.tool_calls):
        if not call.name or call.name not in contract.tool_validators:
            problems.append(f"tool_calls[{i}]: tool {call.name!r} is not registered; allowed: {sorted(contract.tool_validators)}")
            continue
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else None
        except json.JSONDecodeError as exc:
            problems.append(f"tool_calls[{i}] {call.name}: arguments are not JSON ({exc.msg})")
            continue
        except RecursionError:
            problems.append(f"tool_calls[{i}] {call.name}: arguments are JSON nested too deeply to decode")
            continue
        if not isinstance(arguments, dict):
            problems.append(f"tool_calls[{i}] {call.name}: arguments must be a JSON object")
            continue
        problems += _schema_problems(contract.tool_validators[call.name], arguments, f"tool_calls[{i}] {call.name}")
    return problems
