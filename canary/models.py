"""Canary state: providers, endpoints, rounds, probe results, per-round outcomes.

Rows are never hard-deleted: the history is the evidence behind every decision.
"""

from __future__ import annotations

from enum import StrEnum

from django.db import models

from canary.terms import Action, Layer, Mode, Outcome
from canary.verdicts import Verdict


def _choices(enum: type[StrEnum]) -> list[tuple[str, str]]:
    """Model choices from one of the vocabulary's enums (label: the value, spaced)."""
    return [(m.value, m.value.replace("_", " ")) for m in enum]


VERDICT_CHOICES = _choices(Verdict)
OUTCOME_CHOICES = _choices(Outcome)
MODE_CHOICES = _choices(Mode)
# Audit labels people read in the admin (the policy's actions keep their plain names).
_ACTION_LABELS = {
    Action.WOULD_SUSPEND: "would suspend (observe)",
    Action.LIFTED: "lifted by an admin",
    Action.FALSE_POSITIVE: "marked false positive",
    Action.WEAK_PROBE: "probe weak this round",
}
ACTION_CHOICES = [(a.value, _ACTION_LABELS.get(a, a.value.replace("_", " "))) for a in Action if a != Action.NONE]


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
    # Fields of the last listing that were sent but did not parse (``EndpointInfo.problems``,
    # e.g. "pricing.prompt: 'abc' is not a price (USD per token, 0 to 1000)"): shown on the endpoint page, so an
    # empty price is never mistaken for a free endpoint.
    listing_problems = models.JSONField(default=list, blank=True)
    # The model's input modalities as the listing gives them (["text", "image", "file"]):
    # what a gateway route created from this endpoint accepts (routing.discovery).
    input_modalities = models.JSONField(default=list, blank=True)
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
        FINALIZING = "finalizing", "finalizing"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"
        SKIPPED = "skipped", "skipped (daily spend cap)"

    class Triggers(models.TextChoices):
        SCHEDULE = "schedule", "schedule"
        MANUAL = "manual", "manual"
        # One endpoint's round asked for by live evidence (docs/live-evidence.md).
        CONFIRMATION = "confirmation", "confirmation"

    model_id = models.CharField(max_length=200)
    language = models.CharField(max_length=8)
    # Scheduled rounds claim their 30-minute slot: one per model per slot (unique below).
    # Manual rounds (operators re-running a language by hand) have no slot.
    slot = models.DateTimeField(null=True, blank=True)
    trigger = models.CharField(max_length=16, choices=Triggers.choices, default=Triggers.MANUAL)
    expected_probes = models.PositiveIntegerField(default=0)
    deadline_at = models.DateTimeField(null=True, blank=True, help_text="finalise by then, whatever reported")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    mode = models.CharField(max_length=16, choices=MODE_CHOICES, default=Mode.OBSERVE.value)
    error = models.TextField(blank=True)
    # Probe kinds judged weak this round (a positive control passed, or fleet attribution):
    # {"refusal": "positive control dynamo/bf16 passed", ...}
    weak_probes = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    # A confirmation round probes this one endpoint, on the live evidence it keeps.
    endpoint = models.ForeignKey("Endpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="confirmations")
    live_evidence = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["model_id", "-started_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["model_id", "slot"],
                condition=models.Q(trigger="schedule"),
                name="round_one_per_model_slot",
            ),
        ]

    def __str__(self) -> str:
        return f"round {self.pk} {self.model_id} {self.started_at:%Y-%m-%d %H:%M} {self.language}"


class ProbeResult(models.Model):
    """One probe request (or one round-level check) against one endpoint in one round.

    Three verdicts, each written once: ``raw_verdict`` is the judge's verdict on this
    reply alone; ``probe_verdict`` (with ``check_name``, ``reason``, ``evidence``) is the
    probe's, after its confirmation samples, stored when the probe reports; ``verdict`` is
    the final one, written by the round judgement (``canary.round_judgement``: positive
    controls, fleet attribution) and NULL until the round is judged; ``round_reason`` says
    why the round changed it (blank when it kept the probe's), ``fleet_rate`` (0..1) is
    the share of the fleet failing the same check on the same prompt.

    The round judgement's inputs from the full reply (only an excerpt is stored):
    ``leading_signature`` (the junk a reply starts with: blank for a normal opener,
    NULL when the reply had no text), ``corruption``
    (the hard-corruption judgement as data, free-text replies) and ``language_anomaly``.
    ``sample`` is 0 for the probe, 1.. for confirmation samples of the language probe.
    Times are in ms; cost in USD as reported by OpenRouter's ``usage.cost``. ``ttft_ms``
    and ``total_ms`` count from the request's sending (at the wire); ``wait_ms`` is the
    time the probe waited on our side before that (the per-provider rate limit, the
    hand-off to the event loop, the connection pool and connect), NULL when not measured.
    """

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="results")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="results")
    kind = models.CharField(max_length=32)
    sample = models.PositiveSmallIntegerField(default=0)
    language = models.CharField(max_length=8, blank=True)
    prompt_id = models.CharField(max_length=64, blank=True)
    # NULL until the round is judged (blank would read as a verdict).
    verdict = models.CharField(max_length=20, choices=VERDICT_CHOICES, null=True, blank=True)  # noqa: DJ001
    probe_verdict = models.CharField(max_length=20, choices=VERDICT_CHOICES, blank=True)
    raw_verdict = models.CharField(max_length=20, choices=VERDICT_CHOICES)
    round_reason = models.TextField(blank=True)
    fleet_rate = models.FloatField(null=True, blank=True)
    # NULL: no text to judge; blank: a normal opener.
    leading_signature = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    corruption = models.JSONField(null=True, blank=True)
    language_anomaly = models.BooleanField(default=False)
    check_name = models.CharField(max_length=64, blank=True)
    reason = models.TextField(blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    ttft_ms = models.FloatField(null=True, blank=True)
    total_ms = models.FloatField(null=True, blank=True)
    wait_ms = models.FloatField(null=True, blank=True)
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
    outcome = models.CharField(max_length=16, choices=OUTCOME_CHOICES)
    severity = models.FloatField(default=0)
    evidence = models.JSONField(default=dict, blank=True)
    streak = models.PositiveIntegerField(default=0)
    action = models.CharField(max_length=20, default=Action.NONE.value)
    suspended_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "endpoint"], name="endpoint_round_unique"),
        ]
        ordering = ["round_id", "endpoint_id"]

    def __str__(self) -> str:
        return f"{self.endpoint.tag} in round {self.round_id}: {self.outcome}"


# --- Route quarantine (issue "Route quarantine") ----------------------------------------


class ModelConfig(models.Model):
    """Per-model canary switches an admin changes at run time (no deploy).

    ``mode``: in observe mode the policy records ``would_suspend`` and routing sees no
    change; in enforce mode canary suspensions enter the ignore list. Default observe.
    The row is also the lock that serialises policy decisions of one model.
    """

    model_id = models.CharField(max_length=200, unique=True)
    mode = models.CharField(max_length=16, choices=MODE_CHOICES, default=Mode.OBSERVE.value)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=150, blank=True)

    class Meta:
        permissions = [("change_mode", "Can switch a model between observe and enforce")]

    def __str__(self) -> str:
        return f"{self.model_id} ({self.mode})"


class EndpointPolicyState(models.Model):
    """The suspension policy's memory of one endpoint (``canary.policy.EndpointState``).

    ``enforced`` False with ``suspended_until`` set is an observe-mode shadow suspension:
    recorded to measure what enforce would do, never in the ignore list.
    """

    endpoint = models.OneToOneField(Endpoint, on_delete=models.PROTECT, related_name="policy_state")
    fail_streak = models.PositiveIntegerField(default=0)
    clean_streak = models.PositiveIntegerField(default=0)
    suspended_until = models.DateTimeField(null=True, blank=True)
    enforced = models.BooleanField(default=False)
    suspension_level = models.PositiveIntegerField(default=0)
    last_suspended_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.endpoint.tag}: streak {self.fail_streak}"


class ImmutableQuerySet(models.QuerySet["Decision"]):
    def delete(self) -> tuple[int, dict[str, int]]:
        raise PermissionError("decisions are audit rows and are never deleted")

    def update(self, **kwargs: object) -> int:
        raise PermissionError("decisions are audit rows and are never changed")


class Decision(models.Model):
    """An immutable audit row: every automatic decision and every manual action, with its
    evidence (which round and probes), actor and reason."""

    model_id = models.CharField(max_length=200)
    endpoint = models.ForeignKey(Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="decisions")
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT, related_name="decisions")
    refers_to = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="followups")
    action = models.CharField(max_length=24, choices=ACTION_CHOICES)
    mode = models.CharField(max_length=16, blank=True)
    actor = models.CharField(max_length=150, default="canary")
    reason = models.TextField()
    evidence = models.JSONField(default=dict, blank=True)
    suspended_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()

    objects = ImmutableQuerySet.as_manager()

    class Meta:
        permissions = [("mark_false_positive", "Can mark a suspension decision a false positive")]
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["model_id", "-created_at"])]

    def __str__(self) -> str:
        target = self.endpoint.tag if self.endpoint is not None else self.model_id
        return f"{self.action} {target} by {self.actor}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise PermissionError("decisions are audit rows and are never changed")
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise PermissionError("decisions are audit rows and are never deleted")



class Exclusion(models.Model):
    """A reviewed or incident exclusion of a provider slug (all its endpoints) or a tag
    (one endpoint) for one model. Removal deactivates the row; nothing is deleted."""

    model_id = models.CharField(max_length=200)
    layer = models.CharField(max_length=16, choices=[(layer.value, layer.value) for layer in (Layer.REVIEWED, Layer.INCIDENT)])
    target = models.CharField(max_length=200, help_text="provider slug (e.g. dynamo) or endpoint tag (e.g. borealis/fp8)")
    reason = models.TextField()
    evidence_url = models.URLField(blank=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    active = models.BooleanField(default=True)
    removed_by = models.CharField(max_length=150, blank=True)
    removed_at = models.DateTimeField(null=True, blank=True)
    removal_reason = models.TextField(blank=True)
    source_file = models.CharField(max_length=300, blank=True, help_text="versioned file a reviewed exclusion came from")

    class Meta:
        permissions = [("review_exclusion", "Can add, change and remove reviewed exclusions")]
        ordering = ["model_id", "layer", "target"]

    def __str__(self) -> str:
        return f"{self.layer}: {self.target} ({self.model_id})"


class Notification(models.Model):
    """An admin notification and its delivery state; sent after commit by a Celery task
    through apprise, retried with backoff; never able to block or fail a round."""

    class States(models.TextChoices):
        PENDING = "pending", "pending"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"
        SKIPPED = "skipped", "skipped (no destination configured)"

    kind = models.CharField(max_length=32)
    model_id = models.CharField(max_length=200, blank=True)
    decision = models.ForeignKey(Decision, null=True, blank=True, on_delete=models.PROTECT, related_name="notifications")
    title = models.CharField(max_length=300)
    body = models.TextField()
    state = models.CharField(max_length=16, choices=States.choices, default=States.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.title} ({self.state})"
