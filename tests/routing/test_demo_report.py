"""The demo's gateway tour reads whole in an 80 to 100 column terminal: validations, tool
calls and errors wrapped at word boundaries, never cut; a reply shown as a sample ends at a
word with ``…``."""

from __future__ import annotations

import pytest

from routing.demo import REPLY_LINES, BreakerTrip, DemoCall, demo_breaker_report, demo_report

ROUTE = "llama-3-3-70b-instruct-harbor-fp4"
VALIDATION = ("prefix: leading_garbage=pass, template_leak=pass, bpe_glyphs=pass, invalid_chars=pass, mojibake=pass, "
              "language=pass (after 66 chars, 48 ms; language: en (user_turn)); post: repetition=pass, refusal=pass")
TOOL = ('tool call book_table({"time": "2025-03-14T18:30:00Z", "party_size": 8, '
        '"restaurant_id": "restaurant_dfaa29f9", "note": "a table by the window, away from the door"})')
REPLY = "*She sets two steaming mugs on the table and slides one toward you.* " * 12


def words(text: str) -> list[str]:
    return " ".join(line.strip() for line in text.splitlines()).split()


@pytest.mark.parametrize("width", [80, 100])
def test_validations_tool_calls_and_errors_are_wrapped_whole(width):
    calls = [
        DemoCall("roleplay-reply@1", "accepted", ROUTE, "streamed 37 chunks:", REPLY, attempts=[(ROUTE, "accepted", VALIDATION)]),
        DemoCall("booking-agent@1", "accepted", ROUTE, TOOL, attempts=[(ROUTE, "accepted", "passed")]),
        DemoCall("invoice-extract@1", "BadRequestError 400", ROUTE,
                 "contract_unsatisfiable: no route serves this contract: every capable route is excluded by the "
                 "canary's ignore list or its own breaker (see the ignore list and the breaker board)"),
    ]
    text = demo_report(calls, width)
    assert all(len(line) <= width for line in text.splitlines()), max(text.splitlines(), key=len)
    joined = words(text)
    for whole in (VALIDATION, TOOL, calls[2].summary):
        assert " ".join(whole.split()) in " ".join(joined)
    # The reply is a sample: some lines of it, ending on a whole word.
    shown = text.split("streamed 37 chunks:")[1].split("booking-agent@1")[0]
    assert 1 < len(shown.strip().splitlines()) <= REPLY_LINES
    assert words(shown)[-1] == "…" and " ".join(words(shown)[:-1]) in " ".join(REPLY.split())


def test_the_breaker_tour_is_wrapped_whole():
    trip = BreakerTrip(route="llama-3-3-70b-instruct-meridian-fp8", tag="meridian/fp8",
                       calls=["InternalServerError 502 attempt_budget_exhausted: attempt budget of 1 used up; last: "
                              "transient (first_token_timeout)"],
                       failure_class="transient", open_until_ms=1764763200000, opened_at_ms=1764759600000,
                       refused="InternalServerError 503 all_routes_suppressed: every capable route is suppressed by its circuit breaker")
    text = demo_breaker_report(trip, page_url="http://127.0.0.1:8000/admin/observability/breakerboard/", width=80)
    assert all(len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=len)
    assert "transient (first_token_timeout)" in " ".join(words(text))
    assert "Opened: the transient breaker of route llama-3-3-70b-instruct-meridian-fp8" in text
