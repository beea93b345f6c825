"""Which first bytes of a 200 event stream are not SSE (issue "Verdicts whose error rate
is known", item 5): an HTML page is malformed output; comments, blank lines and SSE
fields are a stream that simply ended early (a transport error)."""

from __future__ import annotations

import pytest

from openrouter.notsse import HEAD_BYTES, not_sse


@pytest.mark.parametrize(
    "head",
    [
        b"<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n",
        b": OPENROUTER PROCESSING\n\n<html>",
        b'{"error": {"message": "upstream"}}',
    ],
)
def test_bytes_no_event_stream_holds_are_not_sse(head):
    assert not_sse(head)


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n",
        b"event: ping\nid: 3\nretry: 1000\n\n",
        b"data: {\"id\": \"gen-1\"\r\n",
    ],
)
def test_comments_fields_and_blank_lines_are_sse(head):
    assert not not_sse(head)


def test_a_last_line_cut_by_the_head_limit_is_not_read():
    # A comment line longer than the head: its cut end proves nothing.
    head = b": " + b"x" * (HEAD_BYTES - 4) + b"\n" + b"d"
    assert len(head) == HEAD_BYTES and not not_sse(head)
