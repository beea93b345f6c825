"""``idempotency_key_parse``: the Idempotency-Key header read as one sf-string or bare key
(IETF httpapi idempotency-key draft; RFC 8941 section 3.3.3)."""

from __future__ import annotations

import pytest

from routing.idempotency_key import idempotency_key_parse


@pytest.mark.parametrize(("raw", "key"), [
    (None, None),
    ("order-1", "order-1"),
    ('"order-1"', "order-1"),
    ('  "a,b"  ', "a,b"),
    ('"say \\"hi\\" \\\\ bye"', 'say "hi" \\ bye'),
    ("a b", "a b"),
])
def test_a_bare_or_quoted_key_is_read(raw: str | None, key: str | None) -> None:
    assert idempotency_key_parse(raw) == key


@pytest.mark.parametrize(("raw", "says"), [
    ("a1,a2", "sent twice"),
    ('"a1", "a2"', "sent twice"),
    ("cl\u00c3\u00a9", "byte 0xc3 at offset 2"),
    ("tab\there", "byte 0x09 at offset 3"),
    ('"abc', "does not close"),
    ('"a\\b"', "escapes only"),
    ('"abc";x=1', "nothing after it"),
    ('""', "1 to 100"),
    ("k" * 101, "got 101"),
])
def test_anything_else_is_refused_naming_the_header(raw: str, says: str) -> None:
    with pytest.raises(ValueError, match="^Idempotency-Key ") as info:
        idempotency_key_parse(raw)
    assert says in str(info.value)
