"""Checks for identifiers that arrive from people and backends (CLI flags, API queries,
files, admin forms) before they reach the database: a clear message instead of a
database error or a silent miss."""

from __future__ import annotations

import re

MODEL_ID_MAX = 200  # the model_id columns' length
# The characters of OpenRouter's ids (``author/slug``, a variant after ``:``, e.g.
# ``mistralai/mistral-7b-instruct:free``: OpenRouter API docs, Models). Anything else
# (``?``, ``#``, ``%``) would change the URL the id is put into.
_ID_PART = re.compile(r"[a-z0-9._:~+-]+")


def validate_model_id(value: str) -> str:
    """The canonical form of ``value``, an OpenRouter model id ``author/slug`` (at most 200
    characters; exactly one ``/`` with a non-empty author and slug; letters, digits and
    ``. _ - : ~ +``): stripped and lower-cased, so ``Meta-Llama/Llama-3.3-70B-Instruct``
    and ``meta-llama/llama-3.3-70b-instruct`` name one model (OpenRouter's ids are lower
    case: OpenRouter API docs, Models). Every entry point (API queries, commands, files,
    routes, exclusions, dashboard pickers) passes ids through here before they are
    compared or stored; ``a/b/c`` would ask OpenRouter's listing
    ``/models/{author}/{slug}/endpoints`` for another path. Raises ValueError saying what
    is wrong otherwise."""
    model_id = value.strip().lower()
    # The length first: the other messages quote the id, which must stay short.
    if len(model_id) > MODEL_ID_MAX:
        raise ValueError(f"a model id has at most {MODEL_ID_MAX} characters, got {len(model_id)}")
    if any(ch.isspace() or not ch.isprintable() for ch in model_id):
        raise ValueError(f"a model id has no spaces or control characters, got {value!r}")
    slashes = model_id.count("/")
    if slashes == 0:
        raise ValueError(f"a model id must look like 'author/slug', got {value!r}")
    if slashes > 1:
        raise ValueError(f"a model id must look like 'author/slug' with exactly one '/', got {value!r}")
    author, _, slug = model_id.partition("/")
    if not author:
        raise ValueError(f"a model id must look like 'author/slug' with an author before the '/', got {value!r}")
    if not slug:
        raise ValueError(f"a model id must look like 'author/slug' with a slug after the '/', got {value!r}")
    if not (_ID_PART.fullmatch(author) and _ID_PART.fullmatch(slug)):
        raise ValueError(f"a model id has only letters, digits and . _ - : ~ +, got {value!r}")
    if {author, slug} & {".", ".."}:
        # ``../..`` would make the listing's URL another path (RFC 3986, dot segments).
        raise ValueError(f"a model id's author and slug cannot be '.' or '..', got {value!r}")
    return model_id
