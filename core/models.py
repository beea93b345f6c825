"""Shared state: the service tokens of the internal API and the gateway."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class ServiceToken(models.Model):
    """A bearer token of a backend service for the internal API and the gateway. Only a
    SHA-256 hash is stored; the token itself is shown once when issued.

    A name can hold several rows over time (rotation issues a new secret under the same
    name; rows are never deleted, so they are the history of who had access). At most one
    row per name has no revocation time; a rotated-out row carries a ``revoked_at`` in the
    future until its overlap ends, and is valid until then."""

    name = models.CharField(max_length=150)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoke_reason = models.CharField(max_length=2000, blank=True)
    # Updated when a request is verified against the database, so to within the verify
    # cache's lifetime (``core.tokens.VERIFY_CACHE_S``).
    last_used_at = models.DateTimeField(null=True, blank=True)
    rotated_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        # The table predates this app (the model lived in ``canary``): kept, not renamed.
        db_table = "canary_servicetoken"
        constraints = [
            models.UniqueConstraint(
                fields=["name"], condition=Q(revoked_at__isnull=True), name="service_token_one_unrevoked_per_name"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
