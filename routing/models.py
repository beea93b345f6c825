"""Routing state: contract versions, routes, request/attempt events, the execution ledger.

Contract versions are immutable once used: an edit is a new version.
Events are rows (one per request, one per attempt, issue point 11) and are never
updated. The execution ledger claims each tool side effect once, by a unique key
(developers' guide; docs/sources/resilience.md, "Idempotency keys").
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from routing.terms import STORED_REQUEST_OUTCOMES


class ContractVersion(models.Model):
    """One version of a routing contract; ``spec`` is the JSON ``contract_from_dict`` reads.

    ``first_used_at`` is set when a request first runs under it; from then on the row is
    immutable (``save`` refuses to change ``spec``), so events always point at what was
    really enforced.
    """

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    spec = models.JSONField()
    note = models.CharField(max_length=300, blank=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField()
    first_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="contract_version_unique"),
        ]
        ordering = ["name", "-version"]

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            stored = ContractVersion.objects.filter(pk=self.pk).values("spec", "first_used_at").first()
            if stored is not None and stored["first_used_at"] is not None and stored["spec"] != self.spec:
                raise ValidationError(f"{self} is in use and immutable; save the change as a new version")
        super().save(*args, **kwargs)


class Route(models.Model):
    """A model on an endpoint: pinned OpenRouter tag or an OpenAI-compatible base URL,
    with its capability profile (prices USD per token, context tokens) and measured
    health (0..1), median latency (ms) and structured-output honour rate (0..1).

    ``api_key_setting`` names the Django setting holding the key for a custom base URL
    (secrets stay out of the database); empty = the OpenRouter key.
    """

    name = models.SlugField(max_length=100, unique=True)
    model_id = models.CharField(max_length=200)
    provider_tag = models.CharField(max_length=200, blank=True, help_text="OpenRouter endpoint tag to pin, e.g. atlas/fp8.")
    base_url = models.URLField(blank=True, help_text="OpenAI-compatible base URL; empty = OpenRouter.")
    api_key_setting = models.CharField(max_length=100, blank=True)
    modalities = models.JSONField(default=list)
    context_length = models.PositiveIntegerField()
    tools = models.BooleanField(default=False)
    output_modes = models.JSONField(default=list, blank=True, help_text='e.g. ["json_object", "json_schema"]')
    model_class = models.CharField(max_length=50, blank=True)
    # Empty (NULL): the price is unknown, which is not free: a caller's provider.max_price
    # passes the route over (routing.provider_prefs).
    price_prompt_usd = models.DecimalField(max_digits=20, decimal_places=12, null=True, blank=True, default=None,
                                           help_text="USD per token; empty = unknown.")
    price_completion_usd = models.DecimalField(max_digits=20, decimal_places=12, null=True, blank=True, default=None,
                                               help_text="USD per token; empty = unknown.")
    region = models.CharField(max_length=50, blank=True)
    enabled = models.BooleanField(default=True)
    health = models.FloatField(default=1.0)
    latency_ms = models.FloatField(null=True, blank=True)
    structured_honoured = models.FloatField(null=True, blank=True)
    measured_at = models.DateTimeField(null=True, blank=True)
    # What the endpoint listing last said for each field ``routes_sync`` fills: a field
    # whose value differs from it was edited by an admin, and a later sync keeps it.
    listing = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# The stored request outcomes with the labels the admin shows ("Accepted").
OUTCOME_CHOICES = [(o.value, o.name.title()) for o in STORED_REQUEST_OUTCOMES]


class RequestEvent(models.Model):
    """One gateway request. Prompt and output are hashed or redacted per the setting
    ``ROUTING_EVENT_CONTENT`` ("hash" or "redact"); never stored in clear."""

    operation_id = models.CharField(max_length=100, unique=True)
    contract = models.CharField(max_length=120)
    outcome = models.CharField(max_length=10, choices=OUTCOME_CHOICES)
    failure_class = models.CharField(max_length=20, blank=True)
    error_code = models.CharField(max_length=40, blank=True)
    message = models.TextField(blank=True)
    final_route = models.CharField(max_length=100, blank=True)
    attempt_count = models.PositiveSmallIntegerField()
    latency_ms = models.FloatField()
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    prompt = models.CharField(max_length=100, blank=True)
    output = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.operation_id} {self.outcome}"


class AttemptEvent(models.Model):
    """One attempt of a request (issue point 11): route, failure class, status, times,
    tokens, estimated cost (USD), why it happened, validation, breaker state."""

    # Keyed by the operation id (known before the request row exists), so the event
    # writer inserts both tables in one batch without reading generated ids back.
    request = models.ForeignKey(
        RequestEvent, on_delete=models.PROTECT, related_name="attempts", to_field="operation_id", db_column="operation_id"
    )
    attempt_id = models.CharField(max_length=64, unique=True)
    index = models.PositiveSmallIntegerField()
    route = models.CharField(max_length=100)
    status = models.CharField(max_length=12)
    failure_class = models.CharField(max_length=20, blank=True)
    failure_reason = models.CharField(max_length=60, blank=True)
    message = models.TextField(blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.FloatField()
    ttft_ms = models.FloatField(null=True, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    fallback_reason = models.CharField(max_length=300)
    validation = models.TextField(blank=True)
    breaker_state = models.CharField(max_length=12)
    breaker_opened = models.CharField(max_length=20, blank=True)
    hedge = models.BooleanField(default=False)
    # Streamed attempts: the canary judges' verdicts, "prefix.<check>" before the commit
    # point and "post.<check>" on the whole reply after the stream, e.g.
    # {"prefix.leading_garbage": "fail"}.
    checks = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField()

    class Meta:
        ordering = ["request_id", "index"]

    def __str__(self) -> str:
        return f"{self.route} #{self.index}: {self.status}"


class ExecutionLedger(models.Model):
    """One row per execution key: a side effect (a tool call, or a whole request of a
    workload with side effects) is claimed here before it runs, by the unique
    constraint; a second claim of the same key finds the row and does not run again.

    ``status``: a ``LedgerStatus``: "claimed" (running), "done" (``result`` stored for
    replay), "failed" (released: the next claim of the key runs again), "unknown" (it may
    have happened; never replayed automatically). ``fingerprint`` is a
    digest of the arguments: the same key with other arguments is refused (IETF
    idempotency-key draft: 422, docs/sources/resilience.md, "Idempotency keys"). A
    request's ``Idempotency-Key`` is claimed here whatever its contract
    (``request:<contract>:<key>``).
    """

    key = models.CharField(max_length=255, unique=True)
    operation_id = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=20)
    fingerprint = models.CharField(max_length=64)
    status = models.CharField(max_length=10)
    result = models.JSONField(null=True, blank=True)
    # How many times the key was claimed: a "failed" row is released, not deleted, and the
    # next claim runs it again (run 2, 3, ...) under a fresh operation id.
    runs = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        # The sweep's reads: settled keys past their keeping time, claims past their lease.
        indexes = [models.Index(fields=["status", "updated_at"], name="ledger_status_updated")]

    def __str__(self) -> str:
        return f"{self.key}: {self.status}"
