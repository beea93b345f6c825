"""Canary services: the writes. Views, tasks and commands call these; they call the pure
modules (probes, outcomes, policy) and store what those decide.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from canary import probes as probe_mod
from canary.languages import validate_language
from canary.models import Endpoint, EndpointRound, ProbeResult, Provider, Round
from canary.outcomes import RoundJudgement, round_judge
from canary.probes import EndpointFacts, ProbeOutcome, ProbeSettings
from canary.ratelimit import provider_limiter
from canary.verdicts import Judgement, Verdict
from observability import canary as observability_canary

log = logging.getLogger(__name__)

EXCERPT_CHARS = 600
ROUND_SLOT_S = 30 * 60
PROVIDER_SEEN_EVERY = timedelta(minutes=10)
# What discovery rewrites on every round (admin-set fields such as positive controls stay).
ENDPOINT_LISTING_FIELDS = [
    "provider", "provider_name", "quantization", "context_length", "supported_parameters",
    "price_prompt_usd", "price_completion_usd", "active", "last_seen",
]


class RoundError(Exception):
    """A round could not run (discovery failed, bad arguments). The message says why."""


def openrouter_client() -> Any:
    """The process's OpenRouter client, configured from settings (no retries of its own).

    One per process and configuration: an httpx client is thread-safe, keeps its
    connections alive, and building one costs an SSL context (~20 ms of CPU), which per
    probe was most of a Celery worker's time.
    """
    return _client_for(
        settings.OPENROUTER_BASE_URL,
        settings.OPENROUTER_API_KEY,
        settings.OPENROUTER_REFERER,
        settings.OPENROUTER_TITLE,
        settings.CANARY_MAX_RESPONSE_BYTES,
        settings.OPENROUTER_MAX_CONNECTIONS,
        settings.OPENROUTER_POOL_SHARDS,
        settings.OPENROUTER_MAX_LINE_BYTES,
    )


@lru_cache(maxsize=8)
def _client_for(
    base_url: str, api_key: str, referer: str, title: str, max_response_bytes: int, max_connections: int, pool_shards: int,
    max_line_bytes: int,
) -> Any:
    from openrouter.client import OpenRouterClient

    return OpenRouterClient(
        base_url=base_url, api_key=api_key, referer=referer, title=title, max_response_bytes=max_response_bytes,
        max_connections=max_connections, pool_shards=pool_shards, max_line_bytes=max_line_bytes,
    )


def probe_settings() -> ProbeSettings:
    """Probe limits from Django settings."""
    return ProbeSettings(
        ttft_limit_s=settings.CANARY_TTFT_LIMIT_S,
        total_timeout_s=settings.CANARY_TOTAL_TIMEOUT_S,
        max_tokens=settings.CANARY_MAX_TOKENS,
    )


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
        Provider.objects.bulk_create(missing.values(), ignore_conflicts=True)
        providers.update({p.slug: p for p in Provider.objects.filter(slug__in=missing)})
    for info in infos:
        provider = providers[info.provider_slug]
        if provider.name != info.provider_name or provider.last_seen < now - PROVIDER_SEEN_EVERY:
            Provider.objects.filter(pk=provider.pk).update(name=info.provider_name, last_seen=now)
            provider.name, provider.last_seen = info.provider_name, now

    listed = {
        info.tag: Endpoint(
            model_id=model_id, tag=info.tag, provider=providers[info.provider_slug], provider_name=info.provider_name,
            quantization=info.quantization or "", context_length=info.context_length,
            supported_parameters=list(info.supported_parameters), price_prompt_usd=info.pricing_prompt,
            price_completion_usd=info.pricing_completion, active=True, first_seen=now, last_seen=now,
        )
        for info in infos
    }
    # One upsert: new endpoints inserted, known ones get the listing's fields (admin-set
    # fields such as positive controls, and first_seen, stay as they are).
    Endpoint.objects.bulk_create(
        listed.values(), update_conflicts=True, unique_fields=["model_id", "tag"], update_fields=ENDPOINT_LISTING_FIELDS
    )
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
    rotation cannot let them escape the two-consecutive-rounds rule (issue 3, point 1)."""
    last = Round.objects.filter(model_id=model_id, status=Round.Status.COMPLETED).order_by("-started_at").first()
    if last is None:
        return {}
    repeats: dict[int, str] = {}
    for er in EndpointRound.objects.filter(round=last):
        lang = (er.evidence or {}).get("language_anomaly")
        if lang:
            repeats[er.endpoint_id] = lang
    return repeats


def _jsonable(value: Any) -> Any:
    """Evidence must survive a JSON column: judgements and odd values become plain data."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Judgement):
        return {"verdict": value.verdict.value, "check": value.check, "reason": value.reason, "evidence": _jsonable(value.evidence)}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _judgement_from(data: Any) -> Judgement | None:
    if not isinstance(data, dict) or "verdict" not in data:
        return None
    return Judgement(Verdict(data["verdict"]), data.get("check", ""), data.get("reason", ""), data.get("evidence") or {})


def _result_row(rnd: Round, ep: Endpoint, o: ProbeOutcome, now: datetime) -> ProbeResult:
    call = o.call
    usage = (getattr(call, "usage", None) or {}) if call is not None else {}
    cost = usage.get("cost")
    j = o.judgement
    raw = o.extra.get("raw_judgement")
    round_data = {k: o.extra[k] for k in ("leading_signature", "corruption", "anomaly") if k in o.extra}
    return ProbeResult(
        round=rnd,
        endpoint=ep,
        kind=o.kind,
        sample=o.sample,
        language=o.language,
        prompt_id=o.prompt_id,
        verdict=j.verdict.value,
        raw_verdict=raw.verdict.value if isinstance(raw, Judgement) else j.verdict.value,
        check_name=j.check,
        reason=j.reason,
        evidence=_jsonable({**j.evidence, "_round": round_data}),
        ttft_ms=getattr(call, "ttft_ms", None),
        total_ms=getattr(call, "total_ms", None),
        finish_reason=(o.reply.finish_reason or "") if o.reply is not None else "",
        http_status=getattr(call, "http_status", None),
        transport_kind=getattr(call, "transport_kind", None) or "",
        serving_provider=getattr(call, "serving_provider", None) or "",
        generation_id=getattr(call, "generation_id", None) or "",
        reply_excerpt=(o.reply.content or "")[:EXCERPT_CHARS] if o.reply is not None else "",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cost_usd=Decimal(str(cost)) if isinstance(cost, int | float) and not isinstance(cost, bool) else Decimal(0),
        created_at=now,
    )


def _outcome_from(row: ProbeResult) -> ProbeOutcome:
    """Rebuild what the round-level judge needs from a stored result."""
    evidence = dict(row.evidence or {})
    round_data = evidence.pop("_round", {}) or {}
    extra: dict[str, Any] = {}
    if "leading_signature" in round_data:
        extra["leading_signature"] = round_data["leading_signature"]
    corruption = _judgement_from(round_data.get("corruption"))
    if corruption is not None:
        extra["corruption"] = corruption
    if round_data.get("anomaly"):
        extra["anomaly"] = True
    judgement = Judgement(Verdict(row.verdict), row.check_name, row.reason, evidence)
    return ProbeOutcome(row.kind, row.sample, row.language, row.prompt_id, judgement, extra=extra)


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


@dataclass(frozen=True)
class ProbeJob:
    """One probe to run: ids only, so it can travel in a Celery message."""

    round_id: int
    endpoint_id: int
    kind: str
    language: str


def round_open(
    model_id: str,
    *,
    now: datetime,
    language: str | None = None,
    mode: str | None = None,
    trigger: str = Round.Triggers.MANUAL,
    client: Any = None,
    budget_s: float | None = None,
) -> tuple[Round, list[ProbeJob]]:
    """Start a round: validate, claim the slot (scheduled rounds), discover, plan probes.

    Returns the running ``Round`` and its probe jobs. Raises ValueError for bad
    arguments, ``DuplicateRound`` when a scheduled round already holds the slot,
    ``SpendCapReached`` when a scheduled round would exceed the daily spend cap (a
    notification says so), ``RoundError`` when discovery fails (stored as a failed round).
    """
    from canary.quarantine import model_config_get

    if language is not None:
        language = validate_language(language)
    if mode is not None and mode not in ("observe", "enforce"):
        raise ValueError(f"unknown mode {mode!r}; expected observe or enforce")
    languages = [validate_language(code) for code in settings.CANARY_LANGUAGES]
    lang = language or round_language(now, languages)
    slot = round_slot(now) if trigger == Round.Triggers.SCHEDULE else None
    if trigger == Round.Triggers.SCHEDULE:
        spent = spend_today_usd(model_id, now)
        cap = Decimal(str(settings.CANARY_DAILY_SPEND_CAP_USD))
        if cap > 0 and spent >= cap:
            from canary.services_notify import notification_create

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
    repeats = {} if language else _language_repeats(model_id)
    jobs = [
        ProbeJob(rnd.pk, ep.pk, kind, repeats.get(ep.pk, lang))
        for ep in endpoints
        for kind in probe_mod.PROBE_KINDS
    ]
    rnd.expected_probes = len(jobs)
    rnd.save(update_fields=["expected_probes"])
    return rnd, jobs


def endpoint_facts(ep: Endpoint) -> EndpointFacts:
    """What a probe needs to know of an endpoint row."""
    return EndpointFacts(ep.tag, ep.provider_name, ep.supports_structured_outputs)


def probe_execute(job: ProbeJob, ep: Endpoint, client: Any = None, *, rate_limited: bool = False) -> list[ProbeOutcome]:
    """Run one probe job without touching the database: wait for the provider's rate
    limit (unless the caller already took this probe's slot: ``rate_limited``), pin the
    endpoint, judge."""
    if not rate_limited:
        provider_limiter().acquire(ep.provider.slug)
    return probe_mod.probe_run(job.kind, client or openrouter_client(), ep.model_id, endpoint_facts(ep), job.language, probe_settings())


def probe_record(
    job: ProbeJob, outcomes: Sequence[ProbeOutcome], now: datetime, *, rnd: Round | None = None, ep: Endpoint | None = None
) -> None:
    """Store a probe's results; a redelivered probe never creates a second result (the
    unique constraint on round, endpoint, kind and sample; conflicts are ignored).
    ``rnd``/``ep`` may be passed to save the look-ups."""
    rnd = rnd or Round.objects.get(pk=job.round_id)
    ep = ep or Endpoint.objects.get(pk=job.endpoint_id)
    ProbeResult.objects.bulk_create([_result_row(rnd, ep, o, now) for o in outcomes], ignore_conflicts=True)


def round_probes_done(round_id: int) -> bool:
    """Have all planned probes of the round reported?"""
    expected = Round.objects.values_list("expected_probes", flat=True).get(pk=round_id)
    done = ProbeResult.objects.filter(round_id=round_id, sample=0, kind__in=probe_mod.PROBE_KINDS).count()
    return done >= expected


def round_finalize(round_id: int, *, finished_at: datetime | None = None) -> Round | None:
    """Judge a round from its stored results and apply the suspension policy, once.

    Claimed with a conditional UPDATE (running -> finalizing): of several finalisers
    (the last probe, the budget timer, the next trigger) exactly one proceeds; the others
    get None. A probe that never reported is stored as a ``transport_error`` for its
    endpoint, so a lost worker freezes a streak and never advances it.
    """
    if Round.objects.filter(pk=round_id, status=Round.Status.RUNNING).update(status=Round.Status.FINALIZING) != 1:
        return None
    rnd = Round.objects.get(pk=round_id)
    now = rnd.started_at
    endpoints = list(Endpoint.objects.filter(model_id=rnd.model_id, active=True))
    reported = set(
        ProbeResult.objects.filter(round=rnd, sample=0).values_list("endpoint_id", "kind")
    )
    missing = [
        ProbeResult(
            round=rnd, endpoint=ep, kind=kind, sample=0, language=rnd.language, verdict=Verdict.TRANSPORT_ERROR.value,
            raw_verdict=Verdict.TRANSPORT_ERROR.value, check_name="probe_lost", transport_kind="lost",
            reason="the probe never reported before the round's time budget ran out (lost worker?)",
            evidence={}, created_at=timezone.now(),
        )
        for ep in endpoints
        for kind in probe_mod.PROBE_KINDS
        if (ep.pk, kind) not in reported
    ]
    ProbeResult.objects.bulk_create(missing, ignore_conflicts=True)
    rows = list(ProbeResult.objects.filter(round=rnd).select_related("endpoint").exclude(kind__in=probe_mod.ROUND_CHECKS))
    by_endpoint: dict[str, list[ProbeOutcome]] = defaultdict(list)
    ep_by_tag: dict[str, Endpoint] = {}
    for row in rows:
        by_endpoint[row.endpoint.tag].append(_outcome_from(row))
        ep_by_tag[row.endpoint.tag] = row.endpoint
    controls = {ep.tag: list(ep.positive_control_kinds or []) for ep in ep_by_tag.values() if ep.positive_control_kinds}
    judged = round_judge(
        by_endpoint,
        controls,
        fleet_fail_share=settings.CANARY_FLEET_FAIL_SHARE,
        fleet_min_endpoints=settings.CANARY_FLEET_MIN_ENDPOINTS,
    )
    _store_judgement(rnd, rows, ep_by_tag, by_endpoint, judged, finished_at or timezone.now())
    from canary.quarantine import suspension_apply

    suspension_apply(rnd, now, rnd.mode)
    rnd.refresh_from_db()
    observability_canary.round_finished(rnd.pk)
    return rnd


def round_close_stuck(model_id: str, now_wall: datetime) -> list[int]:
    """Finalise the model's rounds still running past their time budget (called by the
    next trigger); returns their ids."""
    closed = []
    for rnd in Round.objects.filter(model_id=model_id, status=Round.Status.RUNNING, deadline_at__lt=now_wall):
        if round_finalize(rnd.pk) is not None:
            closed.append(rnd.pk)
    return closed


def round_run(
    model_id: str,
    *,
    now: datetime,
    language: str | None = None,
    mode: str | None = None,
    client: Any = None,
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
    # Rows are read here, in the calling thread: pool threads never touch the database.
    endpoints = {ep.pk: ep for ep in Endpoint.objects.filter(pk__in={j.endpoint_id for j in jobs}).select_related("provider")}
    with ThreadPoolExecutor(max_workers=max(1, settings.CANARY_CONCURRENCY)) as pool:
        futures = {pool.submit(probe_execute, job, endpoints[job.endpoint_id], client): job for job in jobs}
        # Results are written from this thread only: one DB connection, no cross-thread
        # transactions, and each row is committed as soon as its probe finishes.
        for fut in as_completed(futures):
            probe_record(futures[fut], fut.result(), now, rnd=rnd, ep=endpoints[futures[fut].endpoint_id])
    finalized = round_finalize(rnd.pk, finished_at=now + timedelta(seconds=time.monotonic() - started))
    return finalized or Round.objects.get(pk=rnd.pk)


def _discovery_failed(rnd: Round, error: str, now: datetime) -> None:
    from canary.models import Decision
    from canary.services_notify import notification_create

    audit = Decision.objects.create(
        model_id=rnd.model_id, round=rnd, action="discovery_failed", actor="canary",
        reason=error[:2000], evidence={"round": rnd.pk}, created_at=now,
    )
    notification_create("discovery_failed", f"discovery failed for {rnd.model_id}", error, model_id=rnd.model_id, decision=audit)


def _store_judgement(
    rnd: Round,
    rows: list[ProbeResult],
    ep_by_tag: dict[str, Endpoint],
    by_endpoint: dict[str, list[ProbeOutcome]],
    judged: RoundJudgement,
    finished_at: datetime,
) -> None:
    """Write the round-level judgement in a constant number of statements: the final
    verdicts onto the probes' own rows, one row per endpoint and round check, one
    ``EndpointRound`` per endpoint (upserts: a second finaliser cannot get here, but a
    replayed history may)."""
    first_rows = {(row.endpoint.tag, row.kind): row for row in rows if row.sample == 0}
    changed: list[ProbeResult] = []
    checks: list[ProbeResult] = []
    endpoint_rounds: list[EndpointRound] = []
    for tag, ev in judged.endpoints.items():
        ep = ep_by_tag[tag]
        for kind in probe_mod.PROBE_KINDS:
            j = ev.final.get(kind)
            row = first_rows.get((tag, kind))
            if j is None or row is None:
                continue
            round_data = (row.evidence or {}).get("_round", {})
            row.verdict, row.check_name, row.reason = j.verdict.value, j.check, j.reason
            row.evidence = _jsonable({**j.evidence, "fleet_rate": ev.fleet_rates.get(kind), "_round": round_data})
            changed.append(row)
        for kind in probe_mod.ROUND_CHECKS:
            j = ev.final[kind]
            checks.append(ProbeResult(
                round=rnd, endpoint=ep, kind=kind, sample=0, language=rnd.language, prompt_id="round",
                verdict=j.verdict.value, raw_verdict=j.evidence.get("raw_verdict", j.verdict.value),
                check_name=j.check, reason=j.reason,
                evidence=_jsonable({**j.evidence, "fleet_rate": ev.fleet_rates.get(kind)}), created_at=finished_at,
            ))
        language_outcome = next((o for o in by_endpoint[tag] if o.kind == probe_mod.LANGUAGE and o.sample == 0), None)
        evidence = dict(ev.evidence)
        if language_outcome is not None and language_outcome.extra.get("anomaly"):
            evidence["language_anomaly"] = language_outcome.language
        endpoint_rounds.append(EndpointRound(
            round=rnd, endpoint=ep, outcome=ev.outcome, severity=ev.severity,
            evidence=_jsonable(evidence), created_at=finished_at,
        ))
    with transaction.atomic():
        # Upserts on the primary key: one INSERT … ON CONFLICT statement (bulk_update's
        # CASE WHEN per row and field costs far more CPU to build).
        ProbeResult.objects.bulk_create(
            changed, update_conflicts=True, unique_fields=["id"], update_fields=["verdict", "check_name", "reason", "evidence"]
        )
        ProbeResult.objects.bulk_create(
            checks, update_conflicts=True, unique_fields=["round", "endpoint", "kind", "sample"],
            update_fields=["language", "prompt_id", "verdict", "raw_verdict", "check_name", "reason", "evidence", "created_at"],
        )
        EndpointRound.objects.bulk_create(
            endpoint_rounds, update_conflicts=True, unique_fields=["round", "endpoint"],
            update_fields=["outcome", "severity", "evidence", "created_at"],
        )
        totals = ProbeResult.objects.filter(round=rnd).aggregate(
            prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost_usd")
        )
        rnd.prompt_tokens = totals["prompt"] or 0
        rnd.completion_tokens = totals["completion"] or 0
        rnd.cost_usd = totals["cost"] or Decimal(0)
        rnd.weak_probes = judged.weak_probes
        rnd.status = Round.Status.COMPLETED
        rnd.finished_at = finished_at
        rnd.save()
