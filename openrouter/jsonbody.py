"""The one JSON decoder for bodies and SSE data frames from upstream.

One explicit policy for invalid UTF-8, chosen by the caller:

- ``"replace"`` (the canary): invalid bytes become U+FFFD and the text is still judged;
  a stray byte inside the content must not hide the whole reply from the judges.
- ``"reject"`` (the gateway): the body is refused; forwarding replaced text to a caller
  would pass off a corrupted answer as the provider's.

Everything else is ``json.loads``: the same values (``NaN``, big integers, lone surrogate
escapes, duplicate keys: last wins) and the same refusals. Nesting deeper than the
interpreter's recursion limit is a refused body, never a ``RecursionError``.

orjson decodes first (about half the CPU of the stdlib scanner on a chunk frame; a
streamed reply is one frame per token). It accepts only strict UTF-8 RFC 8259 JSON and
gives the stdlib's values for it, except integers outside 64 bits, which it turns into
floats: text holding a run of 19 or more digits, or anything orjson refuses (``NaN``, a
lone surrogate escape, a byte-order mark, invalid UTF-8, nesting past 1,024), goes to
the stdlib path, whose values, messages and UTF-8 policy are the answer.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import orjson

InvalidUtf8 = Literal["replace", "reject"]

# ``json.loads`` on bytes first guesses the encoding, decodes, then scans; a body is UTF-8
# (JSON text exchanged between systems must be, RFC 8259 §8.1), so decode and scan
# directly, which is about half the CPU per frame.
_decoder = json.JSONDecoder()
# A number orjson may not hold exactly (|n| >= 2**63 needs 19 digits): the stdlib decides.
# Found by mapping every digit to "0" and everything else to " " (one C pass) and
# looking for 19 zeros: a regular expression for the digit run cost more than the decode.
_DIGIT_MAP = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_DIGITS = b"0" * 19


class InvalidBodyError(ValueError):
    """A body or SSE data frame that is not the JSON we expect (the message says why)."""


class TooLargeError(InvalidBodyError):
    """A reply or one of its lines exceeded its byte cap; reading stopped at the cap.

    ``what`` is ``"reply"`` or ``"line"``; ``limit`` the cap in bytes. A subclass of
    ``InvalidBodyError``: to the gateway an oversized reply is an unusable body, while the
    canary tells it apart (its ``too_large`` transport kind).
    """

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"the {what} exceeds the {limit}-byte cap; reading stopped")
        self.what = what
        self.limit = limit


def decode_json(raw: bytes | str, *, invalid_utf8: InvalidUtf8) -> Any:
    """Decode one JSON text; surrounding whitespace and a UTF-8 byte-order mark are allowed.

    Raises ``InvalidBodyError`` for an empty text, text that is not JSON, JSON nested too
    deeply to decode, and (``invalid_utf8="reject"``) bytes that are not UTF-8.
    """
    if isinstance(raw, bytes) and _LONG_DIGITS not in raw.translate(_DIGIT_MAP):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # the stdlib path below gives the refusal (or the value) and its message
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8", errors="replace" if invalid_utf8 == "replace" else "strict")
        except UnicodeDecodeError as exc:
            raise InvalidBodyError(f"not UTF-8 at byte {exc.start}: {raw[max(0, exc.start - 20):exc.start + 20]!r}") from exc
    else:
        text = raw
    text = text.strip().lstrip("\ufeff")
    if not text:
        raise InvalidBodyError("empty body")
    try:
        obj, end = _decoder.raw_decode(text)
    except RecursionError as exc:
        raise InvalidBodyError("JSON nested too deeply to decode") from exc
    except ValueError as exc:
        raise InvalidBodyError(f"not JSON ({exc}): {text[:120]!r}") from exc
    if end != len(text):
        raise InvalidBodyError(f"not JSON (extra data at char {end}): {text[:120]!r}")
    return obj


def decode_object(raw: bytes | str, what: str, *, invalid_utf8: InvalidUtf8) -> dict[str, Any]:
    """``decode_json`` that also requires a JSON object; messages start with ``what``.

    Raises ``InvalidBodyError``.
    """
    try:
        obj = decode_json(raw, invalid_utf8=invalid_utf8)
    except InvalidBodyError as exc:
        raise InvalidBodyError(f"{what}: {exc}") from exc
    if not isinstance(obj, dict):
        raise InvalidBodyError(f"{what}: JSON is a {type(obj).__name__}, not an object")
    return obj
