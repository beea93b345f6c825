"""The rule for a production ``SECRET_KEY`` (pure: settings.py calls it at start-up)."""

from __future__ import annotations

# Placeholders people leave in place; the first is the one our `.env.example` once shipped.
_PLACEHOLDERS = frozenset({"change-me", "changeme", "secret", "insecure-development-key-not-for-production"})
MIN_LENGTH = 50
MIN_DISTINCT = 5


def secret_key_problem(secret: str) -> str | None:
    """What is wrong with ``secret`` as a production secret key, or None when it is fine.

    The rule of Django's deployment check (``security.W009``, Django docs "System check
    framework"): at least 50 characters, at least 5 distinct ones, no ``django-insecure-``
    prefix (the key ``startproject`` writes); a known placeholder is refused whatever its
    length.
    """
    if not secret:
        return "is not set"
    if secret.strip().lower() in _PLACEHOLDERS:
        return f"is the placeholder {secret.strip()!r}"
    if secret.startswith("django-insecure-"):
        return "is a development key (django-insecure- prefix)"
    if len(secret) < MIN_LENGTH:
        return f"is {len(secret)} characters long; at least {MIN_LENGTH} are required"
    if len(set(secret)) < MIN_DISTINCT:
        return f"has fewer than {MIN_DISTINCT} distinct characters"
    return None
