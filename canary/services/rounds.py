"""Round services: open a round (claim its slot, discover and sync endpoints, plan the
probes), run it in this process, and finalise it (the round-level judgement, then the
suspension policy through ``canary.services.quarantine``).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Sum
from django.utils import timezone

from canary import probes as probe_mod
from canary.db import rows_insert, rows_update
from canary.evidence import failing_kind_of
from canary.models import Decision, Endpoint, EndpointRound, ProbeResult, Provider, Round
from canary.probes import ProbeOutcome
from canary.round_judgement import RoundJudgement, round_judge
from canary.services.baselines import baseline_settings, model_history
from canary.services.client import openrouter_client
from canary.services.notifications import notification_create
from canary.services.probes_run import (
    ProbeJob,
    endpoint_probes_run,
    evidence_data,
    round_inputs_of,
    round_probes_done,
)
from canary.services.quarantine import model_config_get, suspension_apply
from canary.signals import round_finalised
from canary.terms import Action, Mode
from canary.verdicts import Judgement, Verdict
from canary.why import replies_evidence
from core.db_limits import lock_timed_out, transaction_limits_set
from core.languages import validate_language
from openrouter.client import OpenRouterClient

log = logging.getLogger(__name__)

ROUND_SLOT_S = 30 * 60
PROVIDER_SEEN_EVERY = timedelta(minutes=10)
# What the round judgement writes on a probe row (once).
FINAL_FIELDS = ["verdict", "round_reason", "fleet_rate"]
# A probe row's columns that neither the round judgement nor its storing reads.
_UNJUDGED_FIELDS = ("ttft_ms", "total_ms", "wait_ms", "finish_reason", "http_status", "serving_provider", "generation_id",
                    "reply_excerpt", "created_at")
# What discovery rewrites on every round (admin-set fields such as positive controls stay).
ENDPOINT_LISTING_FIELDS = [
    "provider", "provider_name", "quantization", "context_length", "supported_parameters",
    "price_prompt_usd", "price_completion_usd", "listing_problems", "input_modalities", "active", "last_seen",
]


class RoundError(Exception):
    """A round could not run (discovery failed, bad arguments). The message says why."""


def round_language(now: datetime, languages: Sequence[str]) -> str:
    """The round's language: the interface languages rotate by 30-minute slot, so a
    replay with ``--now`` picks the same language as the original round did."""
    slot = int(now.timestamp() // ROUND_SLOT_S)
    return languages[slot % len(languages)]


def endpoints_sync(model_id: str, infos: Iterable[Any], now: datetime) -> list[Endpoint]:
    """Upsert the discovered endpoints of ``model_id`` (``EndpointInfo`` rows from the
    client) and return them in listing order; endpoints no longer listed are marked
    inactive, never deleted.

    A constant number of statements whatever the fleet size (ten rounds start together
    at every slot). Provider rows are shared by every model's rounds, so they are written
    only when something changed (and ``last_seen`` at most every few minutes), each in its
    own short statement: rounds starting together must not queue on the same rows.

    Listing fields that were sent but did not parse (``EndpointInfo.problems``) are stored
    on the endpoint (``listing_problems``) and logged once per endpoint: when they first
    appear or change, not on every round.
    """
    infos = [safe for safe in map(_column_safe, infos) if safe is not None]
    slugs = {info.provider_slug for info in infos}
    providers = {p.slug: p for p in Provider.objects.filter(slug__in=slugs)}
    missing = {
        info.provider_slug: Provider(slug=info.provider_slug, name=info.provider_name, first_seen=now, last_seen=now)
        for info in infos
        if info.provider_slug not in providers
    }
    if missing:
        # Another round may create the same provider at the same moment: keep theirs.
        rows_insert(list(missing.values()))
        providers.update({p.slug: p for p in Provider.objects.filter(slug__in=missing)})
    for info in infos:
        provider = providers[info.provider_slug]
        if provider.name != info.provider_name or provider.last_seen < now - PROVIDER_SEEN_EVERY:
            Provider.objects.filter(pk=provider.pk).update(name=info.provider_name, last_seen=now)
            provider.name, provider.last_seen = info.provider_name, now

    known = dict(Endpoint.objects.filter(model_id=model_id, tag__in=[i.tag for i in infos]).values_list("tag", "listing_problems"))
    for info in infos:
        problems = list(getattr(info, "problems", ()))
        if problems and problems != known.get(info.tag):
            log.warning("endpoint listing of %s: %s sent fields that do not parse: %s", model_id, info.tag, "; ".join(problems))
    listed = {
        info.tag: Endpoint(
            model_id=model_id, tag=info.tag, provider=providers[info.provider_slug], provider_name=info.provider_name,
            quantization=info.quantization or "", context_length=info.context_length,
            supported_parameters=list(info.supported_parameters), price_prompt_usd=info.pricing_prompt,
            price_completion_usd=info.pricing_completion, listing_problems=list(getattr(info, "problems", ())),
            input_modalities=list(getattr(info, "input_modalities", ())),
            active=True, first_seen=now, last_seen=now,
        )
        for info in infos
    }
    # One upsert: new endpoints inserted, known ones get the listing's fields (admin-set
    # fields such as positive controls, and first_seen, stay as they are).
    rows_insert(list(listed.values()), unique_fields=["model_id", "tag"], update_fields=ENDPOINT_LISTING_FIELDS)
    rows = {ep.tag: ep for ep in Endpoint.objects.filter(model_id=model_id).select_related("provider")}
    seen = [rows[info.tag] for info in infos]
    stale = [ep.pk for tag, ep in rows.items() if tag not in listed and ep.active]
    if stale:
        Endpoint.objects.filter(pk__in=stale).update(active=False)
    return seen


def _column_safe(info: Any) -> Any:
    """``info`` with its display fields cut to the columns' sizes, or None (and a log
    line) when its tag or provider slug is longer than they can hold: such an endpoint
    cannot be stored or pinned, and a malformed listing is a finding, never a crash."""
    if len(info.tag) > 200 or len(info.provider_slug) > 100:
        log.warning("endpoint listing: skipping an endpoint with an over-long tag or provider slug: %.80r", info.tag)
        return None
    return dataclasses.replace(info, provider_name=info.provider_name[:200], quantization=(info.quantization or "")[:50])


def _language_repeats(model_id: str) -> dict[int, str]:
    """Endpoints whose last round showed a language anomaly repeat that language, so the
    rotation cannot let them escape the two-consecutive-rounds rule."""
    last = (Round.objects.filter(model_id=model_id, status=Round.Status.COMPLETED)
            .exclude(trigger=Round.Triggers.CONFIRMATION).order_by("-started_at").first())
    if last is None:
        return {}
    repeats: dict[int, str] = {}
    for er in EndpointRound.objects.filter(round=last):
        lang = (er.evidence or {}).get("language_anomaly")
        if lang:
            repeats[er.endpoint_id] = lang
    return repeats


class DuplicateRound(Exception):
    """A scheduled round for this model and slot exists already: nothing was done."""

    def __init__(self, existing: Round) -> None:
        super().__init__(f"round {existing.pk} already holds the {existing.slot:%Y-%m-%d %H:%M} slot of {existing.model_id}: nothing done")
        self.existing = existing


class SpendCapReached(Exception):
    """The model's daily spend cap is reached: no new scheduled round today."""


def round_slot(now: datetime) -> datetime:
    """The 30-minute slot ``now`` falls in (its start, UTC)."""
    epoch = int(now.timestamp()) // ROUND_SLOT_S * ROUND_SLOT_S
    return datetime.fromtimestamp(epoch, tz=UTC)


def spend_today_usd(model_id: str, now: datetime) -> Decimal:
    """USD spent on ``model_id``'s rounds in the 24 hours before ``now``."""
    total = Round.objects.filter(model_id=model_id, started_at__gt=now - timedelta(days=1), started_at__lte=now).aggregate(
        total=Sum("cost_usd")
    )["total"]
    return total or Decimal(0)


def round_open(
    model_id: str,
    *,
    now: datetime,
    language: str | None = None,
    mode: str | None = None,
    trigger: str = Round.Triggers.MANUAL,
    client: OpenRouterClient | None = None,
    budget_s: float | None = None,
) -> tuple[Round, list[ProbeJob]]:
    """Start a round: validate, claim the slot (scheduled rounds), discover, plan probes.

    Returns the running ``Round`` and its probe jobs (none when the listing is empty: the
    round then completes with no endpoints, and an audit row and a notification ask
    whether the model was delisted or renamed). Raises ValueError for bad
    arguments, ``DuplicateRound`` when a scheduled round already holds the slot,
    ``SpendCapReached`` when a scheduled round would exceed the daily spend cap (a
    notification says so), ``RoundError`` when discovery fails (stored as a failed round).
    """
    if language is not None:
        language = validate_language(language)
    if mode is not None and mode not in (Mode.OBSERVE, Mode.ENFORCE):
        raise ValueError(f"unknown mode {mode!r}; expected observe or enforce")
    languages = [validate_language(code) for code in settings.CANARY_LANGUAGES]
    lang = language or round_language(now, languages)
    slot = round_slot(now) if trigger == Round.Triggers.SCHEDULE else None
    if trigger == Round.Triggers.SCHEDULE:
        spent = spend_today_usd(model_id, now)
        cap = Decimal(str(settings.CANARY_DAILY_SPEND_CAP_USD))
        if cap > 0 and spent >= cap:
            notification_create(
                "spend_cap", f"daily spend cap reached for {model_id}",
                f"${spent} spent in the last 24 h (cap ${cap}): no new rounds until it drops", model_id=model_id,
            )
            raise SpendCapReached(f"{model_id}: ${spent} spent in 24 h, cap ${cap}")
    budget = budget_s if budget_s is not None else settings.CANARY_ROUND_BUDGET_S
    try:
        with transaction.atomic():
            rnd = Round.objects.create(
                model_id=model_id, language=lang, started_at=now, slot=slot, trigger=trigger,
                mode=mode or model_config_get(model_id).mode,
                deadline_at=timezone.now() + timedelta(seconds=budget),
            )
    except IntegrityError:
        existing = Round.objects.get(model_id=model_id, slot=slot, trigger=Round.Triggers.SCHEDULE)
        raise DuplicateRound(existing) from None
    client = client or openrouter_client()
    try:
        infos = client.list_endpoints(model_id)
        endpoints = endpoints_sync(model_id, infos, now)
    except Exception as exc:
        rnd.status = Round.Status.FAILED
        rnd.error = f"discovery failed: {exc}"
        rnd.finished_at = timezone.now()
        rnd.save()
        _discovery_failed(rnd, str(exc), now)
        raise RoundError(f"discovery of {model_id} failed: {exc}") from exc
    if not endpoints:
        _no_endpoints(rnd, now)
    repeats = {} if language else _language_repeats(model_id)
    jobs = [
        ProbeJob(rnd.pk, ep.pk, kind, repeats.get(ep.pk, lang))
        for ep in endpoints
        for kind in probe_mod.PROBE_KINDS
    ]
    rnd.expected_probes = len(jobs)
    rnd.save(update_fields=["expected_probes"])
    return rnd, jobs


def round_finalize(round_id: int, *, finished_at: datetime | None = None) -> Round | None:
    """Judge a round from its stored results and apply the suspension policy, once.

    One transaction from the claim to the policy's decisions: the round row is locked
    (SELECT … FOR NO KEY UPDATE, which late probe inserts referencing the round do not
    wait for) while it is ``running`` or ``finalizing``; the judgement, the round's
    ``completed`` status and the policy step commit together or not at all. A finaliser
    killed anywhere in between leaves the round as it was (PostgreSQL rolls the
    transaction back), so the next finaliser (the last probe, the budget timer, the
    overdue-round sweep) simply does it again: resumable, and the policy is applied
    exactly once. Of several finalisers exactly one proceeds; the others wait for its
    commit and get None. ``finalizing`` is accepted too: rounds left in it by a crash of
    an earlier version (which committed the claim on its own) are finalised the same way.

    A probe that never reported is stored as a ``transport_error`` for its endpoint, so
    a lost worker freezes a streak and never advances it. The round's probe results are
    read once; the final verdicts are written once, beside each probe's own verdict.

    The transaction runs under the finaliser's limits (``CANARY_FINALISER_LIMITS``,
    core/db_limits.py): a finaliser that waits past its lock timeout for another's lock
    logs it and returns None instead of waiting for ever behind a stuck one.
    """
    try:
        return _round_finalize(round_id, finished_at)
    except OperationalError as exc:
        if not lock_timed_out(exc):
            raise
        # Another finaliser holds the round past our lock timeout: working on a big
        # round, or stuck (its process frozen). Not waited for: a stuck one's session is
        # ended by PostgreSQL (idle_in_transaction_session_timeout) and the next trigger
        # or sweep finalises the round then; no waiting sessions pile up meanwhile.
        log.warning("round %s: another finaliser has held its row lock for over %.0f s; left to it or to the next trigger",
                    round_id, settings.CANARY_FINALISER_LIMITS.lock_s)
        return None


def _round_finalize(round_id: int, finished_at: datetime | None) -> Round | None:
    with transaction.atomic():
        transaction_limits_set(settings.CANARY_FINALISER_LIMITS)
        rnd = (
            Round.objects.select_for_update(no_key=True)
            .filter(pk=round_id, status__in=(Round.Status.RUNNING, Round.Status.FINALIZING))
            .first()
        )
        if rnd is None:
            return None
        # The model's endpoints once, not a joined copy per probe row (each parses the
        # endpoint's JSON columns); the columns the judgement does not read stay unread.
        model_endpoints = list(Endpoint.objects.filter(model_id=rnd.model_id))
        if rnd.endpoint_id is not None:
            # A confirmation round probes one endpoint: only its probes can be lost.
            model_endpoints = [ep for ep in model_endpoints if ep.pk == rnd.endpoint_id]
        endpoints = {ep.pk: ep for ep in model_endpoints}
        rows = list(ProbeResult.objects.filter(round=rnd).exclude(kind__in=probe_mod.ROUND_CHECKS).defer(*_UNJUDGED_FIELDS))
        if strays := {row.endpoint_id for row in rows} - endpoints.keys():
            endpoints.update((ep.pk, ep) for ep in Endpoint.objects.filter(pk__in=strays))
        for row in rows:
            row.endpoint = endpoints[row.endpoint_id]
        reported = {(row.endpoint_id, row.kind) for row in rows if row.sample == 0}
        lost_at = timezone.now()
        missing = [
            ProbeResult(
                round=rnd, endpoint=ep, kind=kind, sample=0, language=rnd.language, probe_verdict=Verdict.TRANSPORT_ERROR,
                raw_verdict=Verdict.TRANSPORT_ERROR, check_name="probe_lost", transport_kind="lost",
                reason="the probe never reported before the round's time budget ran out (lost worker?)",
                evidence={}, created_at=lost_at,
            )
            for ep in model_endpoints
            if ep.active
            for kind in probe_mod.PROBE_KINDS
            if (ep.pk, kind) not in reported
        ]
        by_endpoint: dict[str, list[ProbeOutcome]] = defaultdict(list)
        ep_by_tag: dict[str, Endpoint] = {}
        for row in rows + missing:
            by_endpoint[row.endpoint.tag].append(round_inputs_of(row))
            ep_by_tag[row.endpoint.tag] = row.endpoint
        controls = {ep.tag: list(ep.positive_control_kinds or []) for ep in ep_by_tag.values() if ep.positive_control_kinds}
        config = baseline_settings()
        own, pool = model_history(rnd.model_id, rnd.started_at, config)
        judged = round_judge(
            by_endpoint,
            controls,
            fleet_fail_share=settings.CANARY_FLEET_FAIL_SHARE,
            fleet_min_endpoints=settings.CANARY_FLEET_MIN_ENDPOINTS,
            history=own,
            peer_history=pool,
            baseline_settings=config,
        )
        _store_judgement(rnd, rows, missing, ep_by_tag, judged, finished_at or timezone.now())
        finalize_hook("judged", rnd.pk)
        suspension_apply(rnd, rnd.started_at, rnd.mode)
    rnd.refresh_from_db()
    round_finalised.send(sender=Round, round_id=rnd.pk)
    return rnd


def finalize_hook(step: str, round_id: int) -> None:
    """A named point inside finalisation (``"judged"``: the judgement stored, the policy
    not yet applied); does nothing. Fault-injection tests replace it to crash a
    finaliser between its steps."""


def round_endpoint_probes(round_id: int, endpoint_ids: Sequence[int], language: str) -> str:
    """Run the probes of a running round's endpoints ``endpoint_ids`` that have not
    reported yet (all of them concurrently) and, when they were the round's last,
    finalise it. Returns ``"round closed"`` when the round is no longer running (nothing
    run), else ``"done"``."""
    rnd = Round.objects.get(pk=round_id)
    if rnd.status != Round.Status.RUNNING:
        return "round closed"
    endpoint_probes_run(
        rnd, [ProbeJob(round_id, endpoint_id, kind, language) for endpoint_id in endpoint_ids for kind in probe_mod.PROBE_KINDS],
    )
    if round_probes_done(rnd):
        round_finalize(round_id)
    return "done"


def endpoint_batches(jobs: Iterable[ProbeJob], per_task: int) -> list[tuple[list[int], str]]:
    """The endpoints of ``jobs`` in batches of at most ``per_task`` (at least 1) that
    share a probe language (an endpoint repeating a failed language keeps its own): one
    ``endpoint_probes_task`` each. Shape: ``[([endpoint_id, ...], language), ...]``,
    sorted by language, then id."""
    by_language: dict[str, set[int]] = defaultdict(set)
    for job in jobs:
        by_language[job.language].add(job.endpoint_id)
    size = max(1, per_task)
    batches = []
    for language in sorted(by_language):
        ordered = sorted(by_language[language])
        batches += [(ordered[i:i + size], language) for i in range(0, len(ordered), size)]
    return batches


def round_close_stuck(model_id: str, now_wall: datetime) -> list[int]:
    """Finalise the model's rounds still ``running`` or ``finalizing`` past their time
    budget (called by the next trigger and the overdue-round sweep); returns their ids."""
    closed = []
    overdue = Round.objects.filter(
        model_id=model_id, status__in=(Round.Status.RUNNING, Round.Status.FINALIZING), deadline_at__lt=now_wall,
    )
    for rnd in overdue:
        if round_finalize(rnd.pk) is not None:
            closed.append(rnd.pk)
    return closed


def rounds_overdue_finalize(now_wall: datetime) -> list[int]:
    """Finalise every model's rounds still ``running`` or ``finalizing`` past their time
    budget; returns their ids. The beat's sweep calls it every few seconds, so a round
    is finalised on time even when the worker holding its budget timer died."""
    models = (
        Round.objects.filter(status__in=(Round.Status.RUNNING, Round.Status.FINALIZING), deadline_at__lt=now_wall)
        .values_list("model_id", flat=True).distinct()
    )
    return [pk for model_id in list(models) for pk in round_close_stuck(model_id, now_wall)]


def round_run(
    model_id: str,
    *,
    now: datetime,
    language: str | None = None,
    mode: str | None = None,
    client: OpenRouterClient | None = None,
) -> Round:
    """Run one canary round of ``model_id`` in this process and return the stored ``Round``.

    Discovery, then every probe of every endpoint concurrently (bounded by
    ``CANARY_CONCURRENCY``), each result saved as it completes (a crash mid-round keeps
    what finished), then round-level judging, outcomes and the suspension policy. ``now``
    is the round's time (replayable schedules); ``finished_at`` is ``now`` plus the
    elapsed wall time. Raises ``RoundError`` when discovery fails (the failed round is
    stored with its error) and ValueError for a bad language or mode.
    """
    started = time.monotonic()
    client = client or openrouter_client()
    rnd, jobs = round_open(model_id, now=now, language=language, mode=mode, client=client)
    endpoint_probes_run(rnd, jobs, client=client, max_workers=settings.CANARY_CONCURRENCY)
    finalized = round_finalize(rnd.pk, finished_at=now + timedelta(seconds=time.monotonic() - started))
    return finalized or Round.objects.get(pk=rnd.pk)


def _discovery_failed(rnd: Round, error: str, now: datetime) -> None:
    audit = Decision.objects.create(
        model_id=rnd.model_id, round=rnd, action=Action.DISCOVERY_FAILED, actor="canary",
        reason=error[:2000], evidence={"round": rnd.pk}, created_at=now,
    )
    notification_create(Action.DISCOVERY_FAILED, f"discovery failed for {rnd.model_id}", error, model_id=rnd.model_id, decision=audit)


NO_ENDPOINTS_TITLE = "the model lists no endpoints: is it delisted or renamed?"


def _no_endpoints(rnd: Round, now: datetime) -> None:
    """An empty listing is a finding, not an error: the round goes on with no endpoints
    (nothing is suspended or restored by it), and admins are told, since a model that
    stops listing endpoints has usually been delisted or renamed on OpenRouter."""
    log.warning("round %s: %s lists no endpoints", rnd.pk, rnd.model_id)
    body = (
        f"{rnd.model_id}: OpenRouter's endpoint listing is empty (round {rnd.pk}); the round completed "
        "with no endpoints. Check the model id on OpenRouter: is it delisted or renamed?"
    )
    audit = Decision.objects.create(
        model_id=rnd.model_id, round=rnd, action=Action.LISTING_EMPTY, actor="canary",
        reason=body, evidence={"round": rnd.pk}, created_at=now,
    )
    notification_create(Action.LISTING_EMPTY, f"{rnd.model_id}: {NO_ENDPOINTS_TITLE}", body, model_id=rnd.model_id, decision=audit)


def _final_onto(row: ProbeResult, final: Judgement, fleet_rate: float | None) -> None:
    """The round judgement's verdict on a probe row, beside the probe's own: the reason
    is kept only when the round changed the verdict or the reason."""
    row.verdict = final.verdict.value
    row.round_reason = final.reason if (final.verdict.value != row.probe_verdict or final.reason != row.reason) else ""
    row.fleet_rate = fleet_rate


def _reply_facts(row: ProbeResult) -> dict[str, Any]:
    """What ``canary.why`` counts of one stored probe row."""
    return {"kind": row.kind, "sample": row.sample, "raw_verdict": row.raw_verdict, "check_name": row.check_name,
            "leading_signature": row.leading_signature, "corruption": row.corruption, "transport_kind": row.transport_kind}


def _store_judgement(
    rnd: Round,
    rows: list[ProbeResult],
    missing: list[ProbeResult],
    ep_by_tag: dict[str, Endpoint],
    judged: RoundJudgement,
    finished_at: datetime,
) -> None:
    """Write the round judgement in a constant number of statements: the final verdicts
    beside the probes' own (existing rows: only the final columns), the lost probes and
    one row per endpoint and round check, one ``EndpointRound`` per endpoint (upserts: a
    second finaliser cannot get here, but a replayed history may)."""
    first_rows = {(row.endpoint.tag, row.kind): row for row in rows + missing if row.sample == 0}
    replies_of: dict[str, list[ProbeResult]] = defaultdict(list)
    for row in rows + missing:
        replies_of[row.endpoint.tag].append(row)
    for row in rows:
        if row.sample > 0:  # confirmation samples: the round judges only the probe's decision
            row.verdict, row.round_reason, row.fleet_rate = row.probe_verdict, "", None
    checks: list[ProbeResult] = []
    endpoint_rounds: list[EndpointRound] = []
    for tag, ev in judged.endpoints.items():
        ep = ep_by_tag[tag]
        for kind in probe_mod.PROBE_KINDS:
            j = ev.final.get(kind)
            first = first_rows.get((tag, kind))
            if j is not None and first is not None:
                _final_onto(first, j, ev.fleet_rates.get(kind))
        for kind in probe_mod.ROUND_CHECKS:
            j = ev.final[kind]
            raw = j.evidence.get("raw_verdict", j.verdict.value)
            checks.append(ProbeResult(
                round=rnd, endpoint=ep, kind=kind, sample=0, language=rnd.language, prompt_id="round",
                verdict=j.verdict.value, probe_verdict=raw, raw_verdict=raw, check_name=j.check, reason=j.reason,
                fleet_rate=ev.fleet_rates.get(kind), evidence=evidence_data(j.evidence), created_at=finished_at,
            ))
        evidence = dict(ev.evidence)
        # How many replies showed each failure (and which statuses froze the probes), so
        # every reason can say "on k of n replies" (canary.why).
        leading = ev.final.get(probe_mod.LEADING_GARBAGE)
        evidence["replies"] = replies_evidence(
            evidence.get("failed") or {}, [_reply_facts(row) for row in replies_of.get(tag, [])],
            failing_kind_of(leading.evidence) if leading is not None else "",
        )
        language_row = first_rows.get((tag, probe_mod.LANGUAGE))
        if language_row is not None and language_row.language_anomaly:
            evidence["language_anomaly"] = language_row.language
        endpoint_rounds.append(EndpointRound(
            round=rnd, endpoint=ep, outcome=ev.outcome, severity=ev.severity,
            evidence=evidence_data(evidence), created_at=finished_at,
        ))
    # Inside the finaliser's transaction: no savepoint of its own (two round trips that
    # bought nothing, a failure here rolls the whole finalisation back anyway).
    with transaction.atomic(savepoint=False):
        rows_update(rows, FINAL_FIELDS)
        # A lost probe that reports after all is overwritten: the row keeps what was judged.
        rows_insert(
            missing + checks, unique_fields=["round", "endpoint", "kind", "sample"],
            update_fields=[*FINAL_FIELDS, "language", "prompt_id", "probe_verdict", "raw_verdict", "check_name", "reason",
                           "evidence", "transport_kind", "created_at"],
        )
        rows_insert(endpoint_rounds, unique_fields=["round", "endpoint"], update_fields=["outcome", "severity", "evidence", "created_at"])
        rnd.prompt_tokens = sum(row.prompt_tokens for row in rows)
        rnd.completion_tokens = sum(row.completion_tokens for row in rows)
        rnd.cost_usd = sum((row.cost_usd for row in rows), Decimal(0))
        rnd.weak_probes = judged.weak_probes
        rnd.status = Round.Status.COMPLETED
        rnd.finished_at = finished_at
        rnd.save()
