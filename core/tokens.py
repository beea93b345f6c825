"""Service tokens for the internal API: issue, rotate, verify (hash only is stored),
revoke, list. Rows are never deleted: a name's rows are the history of who had access.

A token's last use (``last_used_at``) is the time of a database check of it (once per
token per ``VERIFY_CACHE_S`` in each process), kept in memory by the check and written by
``last_use_flush``: after the response of the request that made it (``core.last_use``),
off the request's path (one UPDATE and its commit: 1 ms median on a quiet machine, 5-8 ms
under load, docs/benchmarks.md "Warm start: the first upstream connection")."""

from __future__ import annotations

import hashlib
import math
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.models import ServiceToken

TOKEN_PREFIX = "rvo_"  # noqa: S105 - a public prefix, not a secret
# Verified tokens are remembered this long (s) per process so the ignore-list endpoint does
# not pay a database round trip per request; a revocation takes at most this long to bite.
VERIFY_CACHE_S = 5.0
# The longest overlap a rotation grants (s): a week is enough to roll out a secret, and a
# longer one is more likely a typo (minutes for days) than a plan.
OVERLAP_MAX_S = 7 * 24 * 3600.0
# token hash -> (monotonic time until which it is trusted, its service name)
_cache: dict[str, tuple[float, str]] = {}
# token row pk -> the wall time of its latest check not yet written (last_use_flush)
_unwritten: dict[int, datetime] = {}
_lock = threading.Lock()


def token_hash(token: str) -> str:
    """SHA-256 hex digest of a token (tokens are 256-bit random: no salt needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


NAME_MAX = 150  # ServiceToken.name's length
REASON_MAX = 2000  # ServiceToken.revoke_reason's length


def _live(now: datetime) -> Q:
    """Rows valid at ``now``: never revoked, or revoked at a time still ahead (an overlap)."""
    return Q(revoked_at__isnull=True) | Q(revoked_at__gt=now)


def _new_token() -> tuple[str, str]:
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token)


def _forget_verified() -> None:
    with _lock:
        _cache.clear()


def service_token_issue(name: str, *, now: datetime | None = None) -> tuple[ServiceToken, str]:
    """Create a token for service ``name``; returns the row and the token, shown once.

    Raises ValueError when the name is empty, longer than 150 characters, not printable text
    with a letter or digit (line breaks, tabs, invisible characters), or already has a
    valid token (rotate it instead). A name whose tokens are all revoked can be issued again.
    """
    now = now or timezone.now()
    name = name.strip()
    if not name:
        raise ValueError("a service token needs a name")
    if len(name) > NAME_MAX:
        raise ValueError(f"a service token name has at most {NAME_MAX} characters, got {len(name)}")
    if not name.isprintable() or any(c.isspace() and c != " " for c in name) or not any(c.isalnum() for c in name):
        # A name is read in lists and logs: no line breaks, tabs or invisible characters.
        raise ValueError(f"a service token name is printable text with a letter or digit, got {name!r}")
    if ServiceToken.objects.filter(_live(now), name=name).exists():
        raise ValueError(f"a service token named {name!r} already exists: rotate or revoke it")
    token, digest = _new_token()
    row = ServiceToken.objects.create(name=name, token_hash=digest, prefix=token[:10], created_at=now)
    return row, token


def service_token_rotate(name: str, *, overlap_s: float = 0.0, now: datetime | None = None) -> tuple[ServiceToken, str]:
    """Issue a new secret under ``name`` and revoke the current one ``overlap_s`` seconds
    later (both are valid during the overlap, so a service can switch without downtime).
    Returns the new row and the token, shown once.

    Raises ServiceToken.DoesNotExist when ``name`` has no unrevoked token, ValueError when
    ``overlap_s`` is negative, not finite or above a week (``OVERLAP_MAX_S``).
    """
    now = now or timezone.now()
    if not math.isfinite(overlap_s) or not 0 <= overlap_s <= OVERLAP_MAX_S:
        raise ValueError(f"--overlap-s must be between 0 and {OVERLAP_MAX_S:.0f} seconds, got {overlap_s}")
    with transaction.atomic():
        # The row lock serialises two rotations of one name; the partial unique constraint
        # (one unrevoked row per name) would refuse the loser anyway.
        old = ServiceToken.objects.select_for_update().get(name=name.strip(), revoked_at__isnull=True)
        token, digest = _new_token()
        old.revoked_at = now + timedelta(seconds=overlap_s)
        old.revoke_reason = f"rotated: replaced by {token[:10]}… (overlap {overlap_s:g} s)"
        old.save(update_fields=["revoked_at", "revoke_reason"])
        row = ServiceToken.objects.create(
            name=old.name, token_hash=digest, prefix=token[:10], created_at=now, rotated_from=old,
        )
    _forget_verified()
    return row, token


def service_token_revoke(name: str, *, reason: str, now: datetime | None = None) -> int:
    """Revoke every valid token of ``name`` at once (including one still in a rotation's
    overlap); rows are kept with ``reason``. Returns how many were revoked.

    Raises ValueError for a blank reason or one over 2000 characters, and
    ServiceToken.DoesNotExist when ``name`` has no valid token.
    """
    now = now or timezone.now()
    reason = reason.strip()
    if not reason:
        raise ValueError("revoking a service token needs a reason (--reason)")
    if len(reason) > REASON_MAX:
        raise ValueError(f"a revocation reason has at most {REASON_MAX} characters, got {len(reason)}")
    revoked = ServiceToken.objects.filter(_live(now), name=name.strip()).update(revoked_at=now, revoke_reason=reason)
    if not revoked:
        raise ServiceToken.DoesNotExist(f"no valid service token named {name!r}")
    _forget_verified()
    return revoked


@dataclass(frozen=True)
class TokenListing:
    """One row of ``service_token_list``: ``state`` is ``active``, ``overlap`` (rotated out,
    valid until ``revoked_at``) or ``revoked``."""

    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    revoke_reason: str
    state: str


def token_state(row: ServiceToken, now: datetime) -> str:
    """``active``, ``overlap`` or ``revoked`` for ``row`` at ``now``."""
    if row.revoked_at is None:
        return "active"
    return "overlap" if row.revoked_at > now else "revoked"


def service_token_list(*, now: datetime | None = None) -> list[TokenListing]:
    """Every token row, by name then newest first, with its state at ``now``."""
    now = now or timezone.now()
    return [
        TokenListing(r.name, r.prefix, r.created_at, r.last_used_at, r.revoked_at, r.revoke_reason, token_state(r, now))
        for r in ServiceToken.objects.order_by("name", "-created_at", "-pk")
    ]


def last_use_pending() -> bool:
    """Whether a checked token's last use waits to be written (``last_use_flush``)."""
    return bool(_unwritten)


def last_use_flush() -> int:
    """Write the last uses the checks recorded since the previous flush (one UPDATE per
    token; a time never moves a row's ``last_used_at`` back, whichever process wrote
    later). Returns how many rows it updated. Raises what the database raises (the
    uses it could not write are dropped: the next check of each records it again)."""
    with _lock:
        pending = dict(_unwritten)
        _unwritten.clear()
    written = 0
    for pk, wall in pending.items():
        stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=wall)
        written += ServiceToken.objects.filter(stale, pk=pk).update(last_used_at=wall)
    return written


def service_token_verify(authorization: str | None) -> bool:
    """True when the ``Authorization: Bearer <token>`` header carries a valid token (never
    revoked, or in a rotation's overlap). A database check also records the last use
    (written later: ``last_use_flush``)."""
    return service_token_caller(authorization) is not None


def service_token_caller(authorization: str | None) -> str | None:
    """The name of the service whose valid token the ``Authorization: Bearer <token>``
    header carries, or None (no bearer token, unknown, revoked). The name is the caller's
    identity: it outlives a rotation (the new secret keeps the name), so what is scoped by
    it (the gateway's idempotency keys, routing/README.md) survives a rotation too. A
    database check (one read) also records the last use, in memory: ``last_use_flush``
    writes it."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    # The scheme is case-insensitive (RFC 9110 §11.1).
    if scheme.lower() != "bearer" or not token.strip():
        return None
    digest = token_hash(token.strip())
    now = time.monotonic()
    with _lock:
        until, name = _cache.get(digest, (0.0, ""))
    if until > now:
        return name
    wall = timezone.now()
    row = ServiceToken.objects.filter(_live(wall), token_hash=digest).values("pk", "name", "revoked_at").first()
    if row is None:
        return None
    remember = VERIFY_CACHE_S
    if row["revoked_at"] is not None:
        # An overlap ending sooner than the cache would is honoured to the second.
        remember = min(remember, (row["revoked_at"] - wall).total_seconds())
    with _lock:
        _cache[digest] = (now + remember, row["name"])
        _unwritten[row["pk"]] = max(wall, _unwritten.get(row["pk"], wall))
    return str(row["name"])
