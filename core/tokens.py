"""Service tokens for the internal API: issue, verify (hash only is stored), revoke."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time

from django.utils import timezone

from core.models import ServiceToken

TOKEN_PREFIX = "rvo_"  # noqa: S105 - a public prefix, not a secret
# Verified tokens are remembered this long (s) per process so the ignore-list endpoint does
# not pay a database round trip per request; a revocation takes at most this long to bite.
VERIFY_CACHE_S = 5.0
_cache: dict[str, float] = {}
_lock = threading.Lock()


def token_hash(token: str) -> str:
    """SHA-256 hex digest of a token (tokens are 256-bit random: no salt needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


NAME_MAX = 150  # ServiceToken.name's length


def service_token_issue(name: str) -> tuple[ServiceToken, str]:
    """Create a token for service ``name``; returns the row and the token, shown once.

    Raises ValueError when the name is empty, longer than 150 characters or already taken.
    """
    name = name.strip()
    if not name:
        raise ValueError("a service token needs a name")
    if len(name) > NAME_MAX:
        raise ValueError(f"a service token name has at most {NAME_MAX} characters, got {len(name)}")
    if ServiceToken.objects.filter(name=name).exists():
        raise ValueError(f"a service token named {name!r} already exists")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ServiceToken.objects.create(name=name, token_hash=token_hash(token), prefix=token[:10], created_at=timezone.now())
    return row, token


def service_token_revoke(name: str) -> None:
    """Revoke the named token (kept as a row). Raises ServiceToken.DoesNotExist."""
    row = ServiceToken.objects.get(name=name)
    row.revoked_at = timezone.now()
    row.save(update_fields=["revoked_at"])
    with _lock:
        _cache.clear()


def service_token_verify(authorization: str | None) -> bool:
    """True when the ``Authorization: Bearer <token>`` header carries a live token."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    # The scheme is case-insensitive (RFC 9110 §11.1).
    if scheme.lower() != "bearer" or not token.strip():
        return False
    digest = token_hash(token.strip())
    now = time.monotonic()
    with _lock:
        until = _cache.get(digest)
    if until is not None and until > now:
        return True
    ok = ServiceToken.objects.filter(token_hash=digest, revoked_at__isnull=True).exists()
    if ok:
        with _lock:
            _cache[digest] = now + VERIFY_CACHE_S
    return ok
