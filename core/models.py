"""Shared state: the service tokens of the internal API and the gateway."""

from __future__ import annotations

from django.db import models


class ServiceToken(models.Model):
    """A bearer token of a backend service for the internal API and the gateway. Only a
    SHA-256 hash is stored; the token itself is shown once when issued."""

    name = models.CharField(max_length=150, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table predates this app (the model lived in ``canary``): kept, not renamed.
        db_table = "canary_servicetoken"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
