"""Checks for identifiers that arrive from people and backends (CLI flags, API queries,
files) before they reach the database: a clear message instead of a database error."""

from __future__ import annotations

MODEL_ID_MAX = 200  # the model_id columns' length


def validate_model_id(value: str) -> str:
    """``value`` stripped, if it is an OpenRouter model id ``author/slug`` (at most 200
    characters, no whitespace or control characters). Raises ValueError saying what is
    wrong otherwise."""
    model_id = value.strip()
    if "/" not in model_id.strip("/"):
        raise ValueError(f"a model id must look like 'author/slug', got {value!r}")
    if len(model_id) > MODEL_ID_MAX:
        raise ValueError(f"a model id has at most {MODEL_ID_MAX} characters, got {len(model_id)}")
    if any(ch.isspace() or not ch.isprintable() for ch in model_id):
        raise ValueError(f"a model id has no spaces or control characters, got {value!r}")
    return model_id
