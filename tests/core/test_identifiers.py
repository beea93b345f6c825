"""``validate_model_id``: one OpenRouter model id ``author/slug`` per door, or a message."""

from __future__ import annotations

import pytest

from core.identifiers import validate_model_id


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ("meta-llama/llama-3.3-70b-instruct", "meta-llama/llama-3.3-70b-instruct"),
        (" Meta-Llama/Llama-3.3-70B-Instruct\n", "meta-llama/llama-3.3-70b-instruct"),
        ("mistralai/mistral-7b-instruct:free", "mistralai/mistral-7b-instruct:free"),
        ("qwen/qwen-2.5-72b-instruct", "qwen/qwen-2.5-72b-instruct"),
    ],
)
def test_a_well_formed_id_is_returned_in_its_canonical_form(value: str, canonical: str) -> None:
    assert validate_model_id(value) == canonical


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a/b/c", "exactly one '/'"),
        ("a//b", "exactly one '/'"),
        ("/a/b", "exactly one '/'"),
        ("/slug", "an author before the '/'"),
        ("author/", "a slug after the '/'"),
        ("/", "an author before the '/'"),
        ("noslash", "must look like 'author/slug'"),
        ("a/b c", "no spaces or control characters"),
        ("a/b?c=1", "only letters, digits"),
        ("a/b#x", "only letters, digits"),
        ("a/%2e%2e", "only letters, digits"),
        ("../..", "cannot be '.' or '..'"),
        ("./.", "cannot be '.' or '..'"),
        ("meta/..", "cannot be '.' or '..'"),
    ],
)
def test_a_malformed_id_is_refused_with_what_is_wrong(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("?", r"\?")):
        validate_model_id(value)
