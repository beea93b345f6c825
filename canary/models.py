"""Canary state: providers, endpoints, rounds, probe results, per-round outcomes.

Rows are never hard-deleted: the history is the evidence behind every decision.
"""

from __future__ import annotations

from django.db import models


class Verdicts(models.TextChoices):
    PASS = "pass", "pass"
    FAIL = "fail", "fail"
    INCONCLUSIVE = "inconclusive", "inconclusive"
    TRANSPORT_ERROR = "transport_error", "transport error"
    NOT_APPLICABLE = "not_applicable", "not applicable"


class Outcomes(models.TextChoices):
    FAIL = "fail", "fail"
    CLEAN = "clean", "clean"
    FROZEN = "frozen", "frozen"
    INCONCLUSIVE = "inconclusive", "inconclusive"


class Provider(models.Model):
    """A company serving models on OpenRouter, by slug (``deepinfra``) and display name."""

    slug = models.CharField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class Endpoint(models.Model):
    """One provider's deployment of one model, addressed by its tag (``slug/variant``).

    Pricing is in USD per token (OpenRouter's listing unit). ``positive_control_kinds``
    lists the probe kinds this endpoint is a known failer of (e.g. ``["refusal"]`` for a
    host that runs its own content filter): set by an admin, read by the canary to test
    its own probes (issue "Verdicts you can trust", point 5).
    """

    model_id = models.CharField(max_length=200)
    tag = models.CharField(max_length=200)
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="endpoints")
    provider_name = models.CharField(max_length=200)
    quantization = models.CharField(max_length=50, blank=True)
    context_length = models.PositiveIntegerField(null=True, blank=True)
    supported_parameters = models.JSONField(default=list)
    price_prompt_usd = models.DecimalField(max_digits=20, decimal_places=12, null=True, blank=True)
    price_completion_usd = models.DecimalField(max_digits=20, decimal_places=12, null=True, blank=True)
    positive_control_kinds = models.JSONField(default=list, blank=True)
    active = models.BooleanField(default=True, help_text="Listed by the last discovery.")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model_id", "tag"], name="endpoint_unique_model_tag"),
        ]
        ordering = ["model_id", "tag"]

    def __str__(self) -> str:
        return f"{self.tag} ({self.model_id})"

    @property
    def supports_structured_outputs(self) -> bool:
        return "structured_outputs" in (self.supported_parameters or [])


class Round(models.Model):
    """One canary round of one model: discovery, probes, judging, outcomes."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"

    model_id = models.CharField(max_length=200)
    language = models.CharField(max_length=8)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    mode = models.CharField(max_length=16, default="observe")
    error = models.TextField(blank=True)
    # Probe kinds judged weak this round (a positive control passed, or fleet attribution):
    # {"refusal": "positive control dynamo/bf16 passed", ...}
    weak_probes = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["model_id", "-started_at"])]

    def __str__(self) -> str:
        return f"round {self.pk} {self.model_id} {self.started_at:%Y-%m-%d %H:%M} {self.language}"


class ProbeResult(models.Model):
    """One probe request (or one round-level check) against one endpoint in one round.

    ``raw_verdict`` is the judge's verdict on the reply alone; ``verdict`` is the verdict
    after round-level evidence (confirmation samples, positive controls, fleet attribution).
    ``sample`` is 0 for the probe, 1.. for confirmation samples of the language probe.
    Times are in ms; cost in USD as reported by OpenRouter's ``usage.cost``.
    """

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="results")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="results")
    kind = models.CharField(max_length=32)
    sample = models.PositiveSmallIntegerField(default=0)
    language = models.CharField(max_length=8, blank=True)
    prompt_id = models.CharField(max_length=64, blank=True)
    verdict = models.CharField(max_length=20, choices=Verdicts.choices)
    raw_verdict = models.CharField(max_length=20, choices=Verdicts.choices)
    check_name = models.CharField(max_length=64, blank=True)
    reason = models.TextField(blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    ttft_ms = models.FloatField(null=True, blank=True)
    total_ms = models.FloatField(null=True, blank=True)
    finish_reason = models.CharField(max_length=32, blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    transport_kind = models.CharField(max_length=32, blank=True)
    serving_provider = models.CharField(max_length=200, blank=True)
    generation_id = models.CharField(max_length=200, blank=True)
    reply_excerpt = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            # A redelivered probe must not create a second result.
            models.UniqueConstraint(
                fields=["round", "endpoint", "kind", "sample"], name="probe_result_unique"
            ),
        ]
        ordering = ["round_id", "endpoint_id", "kind", "sample"]

    def __str__(self) -> str:
        return f"{self.endpoint.tag} {self.kind}#{self.sample}: {self.verdict}"


class EndpointRound(models.Model):
    """An endpoint's outcome in one round (``fail``, ``clean``, ``frozen``) with its evidence.

    ``streak``/``action``/``suspended_until`` are the suspension policy's decision for
    this round (issue "Route quarantine").
    """

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="endpoint_rounds")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="endpoint_rounds")
    outcome = models.CharField(max_length=16, choices=Outcomes.choices)
    severity = models.FloatField(default=0)
    evidence = models.JSONField(default=dict, blank=True)
    streak = models.PositiveIntegerField(default=0)
    action = models.CharField(max_length=20, default="none")
    suspended_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "endpoint"], name="endpoint_round_unique"),
        ]
        ordering = ["round_id", "endpoint_id"]
