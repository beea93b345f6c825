"""The fleet loader's primitive checks: each takes a raw JSON value and its JSON path and
returns the value typed, or raises ``FleetError`` whose path names the offending value
(format: ``docs/fleet-format.md``). ``Problems`` collects every refusal of one pass so that
a fleet author sees all of a file's problems at once."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar, cast


class FleetError(ValueError):
    """A fleet file that cannot be used. ``errors`` lists every problem found, as
    ``(path, problem)`` in the order the loader checks them (``path`` is the JSON path,
    "" for the whole file); ``path`` and ``problem`` are the first. The message is one
    ``path: problem`` line per problem."""

    def __init__(self, path: str, problem: str, *more: tuple[str, str]) -> None:
        self.path = path
        self.problem = problem
        self.errors: tuple[tuple[str, str], ...] = ((path, problem), *more)
        super().__init__("\n".join(f"{where}: {what}" if where else what for where, what in self.errors))


T = TypeVar("T")


class Problems:
    """The problems found so far: a parser that fails is recorded and stands in for its
    default, so the rest of the file is still checked."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def check(self, parse: Callable[..., T], raw: Any, path: str, default: T, *args: Any) -> T:
        try:
            return parse(raw, path, *args)
        except FleetError as exc:
            self.found.extend(exc.errors)
            return default

    def field(
        self, obj: Mapping[str, Any], key: str, parse: Callable[..., T], path: str, default: T, *args: Any
    ) -> T:
        """``parse(obj[key], path.key, *args)``, or ``default`` when the key is absent
        (``check_object`` already recorded a missing required key) or its value is refused."""
        if key not in obj:
            return default
        return self.check(parse, obj[key], join_path(path, key), default, *args)


def show_value(value: Any) -> str:
    """A value as the fleet author wrote it (JSON), for error messages."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def is_int(value: Any) -> bool:
    # JSON true/false decode to bool, which is an int subclass in Python: not a number here.
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    # NaN != NaN; Python's json reads Infinity and 1e400 as infinite floats: refused here,
    # with the key's path, beside the file's other errors.
    return is_int(value) or (isinstance(value, float) and value == value and abs(value) != float("inf"))


def check_object(
    raw: Any, path: str, *, required: tuple[str, ...], optional: tuple[str, ...], p: Problems
) -> Mapping[str, Any]:
    """``raw`` as a mapping; its unknown and missing keys are recorded in ``p``. Raises
    FleetError when it is not an object (nothing inside can be checked)."""
    if not isinstance(raw, dict):
        # The path is said once, by the error's "path: " (the whole file has none).
        raise FleetError(path, f"{'must' if path else 'fleet must'} be an object, got {show_value(raw)}")
    p.found.extend((join_path(path, key), "unknown key") for key in raw if key not in required and key not in optional)
    p.found.extend((join_path(path, key), "required key is missing") for key in required if key not in raw)
    return cast(Mapping[str, Any], raw)


def check_matching(raw: Any, path: str, pattern: re.Pattern[str], shape: str) -> str:
    text = check_string(raw, path)
    if not pattern.fullmatch(text):
        raise FleetError(path, f"must look like {shape}, got {json.dumps(text)}")
    return text


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check_array(raw: Any, path: str) -> list[Any]:
    if not isinstance(raw, list):
        raise FleetError(path, f"must be an array, got {show_value(raw)}")
    return raw


def check_string(raw: Any, path: str) -> str:
    if isinstance(raw, str) and raw and not raw.strip():
        raise FleetError(path, f"must hold more than white space, got {show_value(raw)}")
    if not isinstance(raw, str) or not raw:
        raise FleetError(path, f"must be a non-empty string, got {show_value(raw)}")
    try:
        # JSON may spell a lone surrogate ("\ud800"): a str that every UTF-8 response
        # carrying it would fail to encode (the simulator answered 500).
        raw.encode("utf-8")
    except UnicodeEncodeError:
        # ASCII-escaped, so that the message itself can be printed.
        raise FleetError(path, f"must be valid Unicode text (no lone surrogate), got {json.dumps(raw)}") from None
    return raw


def check_boolean(raw: Any, path: str) -> bool:
    if not isinstance(raw, bool):
        raise FleetError(path, f"must be true or false, got {show_value(raw)}")
    return raw


def check_integer(raw: Any, path: str) -> int:
    if not is_int(raw):
        raise FleetError(path, f"must be an integer, got {show_value(raw)}")
    return cast(int, raw)


def check_positive_int(raw: Any, path: str) -> int:
    if not is_int(raw) or raw <= 0:
        raise FleetError(path, f"must be a positive integer, got {show_value(raw)}")
    return cast(int, raw)


def check_non_negative_int(raw: Any, path: str) -> int:
    if not is_int(raw) or raw < 0:
        raise FleetError(path, f"must be an integer >= 0, got {show_value(raw)}")
    return cast(int, raw)


def check_non_negative(raw: Any, path: str) -> float:
    if not is_number(raw) or raw < 0:
        raise FleetError(path, f"must be a number >= 0, got {show_value(raw)}")
    return float(raw)


def check_rate(raw: Any, path: str) -> float:
    if not is_number(raw) or not 0 <= raw <= 1:
        raise FleetError(path, f"must be a number between 0 and 1, got {show_value(raw)}")
    return float(raw)


def check_enum(raw: Any, path: str, allowed: tuple[str, ...]) -> str:
    if raw not in allowed or not isinstance(raw, str):
        raise FleetError(path, f"must be one of {', '.join(allowed)}, got {show_value(raw)}")
    return raw


def check_price(raw: Any, path: str) -> Decimal:
    # Prices are strings, as OpenRouter serves them: a float would lose the exact digits.
    if not isinstance(raw, str):
        raise FleetError(path, f'must be a decimal string such as "0.0000004", got {show_value(raw)}')
    try:
        value = Decimal(raw)
    except InvalidOperation as exc:
        raise FleetError(path, f"must be a decimal string, got {show_value(raw)}") from exc
    if not value.is_finite() or value < 0:
        raise FleetError(path, f"must be a finite decimal >= 0, got {show_value(raw)}")
    return value
