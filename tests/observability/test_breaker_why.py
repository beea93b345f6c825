"""Why a breaker opened, in words, from the route's last attempts (pure)."""

from __future__ import annotations

from observability.breaker_why import Attempt, attempts_summary


def test_attempts_summary_counts_the_class_and_names_its_reasons():
    attempts = [Attempt("failed", "transient", "http_502"), Attempt("failed", "transient", "first_token_timeout"),
                Attempt("failed", "transient", "http_502"), Attempt("rejected", "invalid_response", "validation"),
                Attempt("accepted", "", "")]
    assert attempts_summary(attempts, "transient") == (
        "3 of the last 5 attempts failed as transient: http_502 ×2, first_token_timeout ×1")
    assert attempts_summary(attempts, "ambiguous") == "none of the last 5 attempts failed as ambiguous"
    assert attempts_summary([], "transient") == ""
