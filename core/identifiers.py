"""Checks for identifiers that arrive from people and backends (CLI flags, API queries,
files) before they reach the database: a clear message instead of a database error."""

from __future__ import annotations

MODEL_ID_MAX = 200  # the model_id columns' length


def validate_model_id(value: str) -> str:
    """The canonical form of ``value``, an OpenRouter model id ``author/slug`` (at most 200
    characters, no whitespace or control characters): stripped and lower-cased, so
    ``Meta-Llama/Llama-3.3-70B-Instruct`` and ``meta-llama/llama-3.3-70b-instruct`` name one
    model (OpenRouter's ids are lower case: OpenRouter API docs, Models). Every entry point
    (API queries, commands, files, routes, exclusions) passes ids through here before they
    are compared or stored. Raises ValueError saying what is wrong otherwise."""
    model_id = value.strip().lower()
    # The length first: the other messages quote the id, which must stay short.
    if len(model_id) > MODEL_ID_MAX:
        raise ValueError(f"a model id has at most {MODEL_ID_MAX} characters, got {len(model_id)}")
    if "/" not in model_id.strip("/"):
        raise ValueError(f"a model id must look like 'author/slug', got {value!r}")
    if any(ch.isspace() or not ch.isprintable() for ch in model_id):
        raise ValueError(f"a model id has no spaces or control characters, got {value!r}")
    return model_id
