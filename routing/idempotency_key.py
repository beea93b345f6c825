"""The ``Idempotency-Key`` request header, read as the IETF httpapi draft "The
Idempotency-Key HTTP Header Field" defines it: one Structured Field string (RFC 8941
section 3.3.3, printable ASCII, ``"abc"``). A bare token such as ``order-1`` is accepted
as well (clients send keys unquoted); what is neither is refused with a message naming
the header, never stored garbled or joined with another key.
"""

from __future__ import annotations

HEADER = "Idempotency-Key"
KEY_MAX = 100  # the operation_id columns' length


def _refuse(detail: str) -> ValueError:
    return ValueError(f"{HEADER} {detail}")


def _non_ascii(value: str) -> ValueError | None:
    for offset, char in enumerate(value):
        if not 0x20 <= ord(char) <= 0x7E:
            # WSGI hands header bytes over as Latin-1: the character is the byte.
            shown = f"byte 0x{ord(char):02x}" if ord(char) <= 0xFF else f"character U+{ord(char):04X}"
            return _refuse(f"must be visible ASCII (a Structured Field string, IETF idempotency-key draft): "
                           f"{shown} at offset {offset}")
    return None


def _sf_string(value: str) -> tuple[str, str]:
    """Parse the sf-string opening ``value`` (RFC 8941 section 4.2.5): (the string, the rest)."""
    out: list[str] = []
    i = 1
    while i < len(value):
        char = value[i]
        if char == "\\":
            if i + 1 >= len(value) or value[i + 1] not in '"\\':
                raise _refuse('escapes only \\" and \\\\ inside a quoted key (RFC 8941 section 3.3.3)')
            out.append(value[i + 1])
            i += 2
            continue
        if char == '"':
            return "".join(out), value[i + 1:]
        out.append(char)
        i += 1
    raise _refuse("opens a quoted key that does not close")


def idempotency_key_parse(raw: str | None) -> str | None:
    """The key a request's ``Idempotency-Key`` header names: None without the header,
    ``abc`` for ``"abc"`` (an sf-string, escapes undone) or for a bare ``abc``.

    Raises ValueError (its message names the header) for a value outside visible ASCII
    (``clé`` arrives as Latin-1 bytes and was stored garbled), two keys (a server joins
    two headers with a comma: ``a1,a2``), an empty key or one over ``KEY_MAX`` (100)
    characters. Source: IETF draft-ietf-httpapi-idempotency-key-header, section 2
    (the value is an sf-string); RFC 9110 section 5.3 (repeated fields are joined by commas).
    """
    if raw is None:
        return None
    value = raw.strip(" \t")
    problem = _non_ascii(value)
    if problem is not None:
        raise problem
    if value.startswith('"'):
        key, rest = _sf_string(value)
        if rest.strip(" \t"):
            if rest.lstrip(" \t").startswith(","):
                raise _refuse("names one key; got two (was the header sent twice?)")
            raise _refuse(f"is one quoted key with nothing after it; got {rest.strip()[:40]!r} after the key")
    else:
        if "," in value:
            raise _refuse(f"names one key; got {value[:60]!r} (was the header sent twice? a key with a comma is quoted: \"a,b\")")
        key = value
    if not 0 < len(key) <= KEY_MAX:
        raise _refuse(f"must be 1 to {KEY_MAX} printable characters, got {len(key)}")
    return key
