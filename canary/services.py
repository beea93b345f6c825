"""Canary services: the writes. Views, tasks and commands call these; they call the pure
modules (probes, outcomes, policy) and store what those decide.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction

from canary import probes as probe_mod
from canary.languages import validate_language
from canary.models import Endpoint, EndpointRound, ProbeResult, Provider, Round
from canary.outcomes import RoundJudgement, round_judge
from canary.probes import EndpointFacts, ProbeOutcome, ProbeSettings
from canary.verdicts import Judgement

log = logging.getLogger(__name__)

EXCERPT_CHARS = 600
ROUND_SLOT_S = 30 * 60


class RoundError(Exception):
    """A round could not run (discovery failed, bad arguments). The message says why."""


def openrouter_client() -> Any:
    """The process's OpenRouter client, configured from settings (no retries of its own)."""
    from canary.openrouter import OpenRouterClient

    return OpenRouterClient(
        base_url=settings.OPENROUTER_BASE_URL,
        api_key=settings.OPENROUTER_API_KEY,
        referer=settings.OPENROUTER_REFERER,
        title=settings.OPENROUTER_TITLE,
        max_response_bytes=settings.CANARY_MAX_RESPONSE_BYTES,
    )


def probe_settings() -> ProbeSettings:
    """Probe limits from Django settings."""
    return ProbeSettings(
        ttft_limit_s=settings.CANARY_TTFT_LIMIT_S,
        total_timeout_s=settings.CANARY_TOTAL_TIMEOUT_S,
        max_tokens=settings.CANARY_MAX_TOKENS,
        max_response_bytes=settings.CANARY_MAX_RESPONSE_BYTES,
    )


def round_language(now: datetime, languages: Sequence[str]) -> str:
    """The round's language: the interface languages rotate by 30-minute slot, so a
    replay with ``--now`` picks the same language as the original round did."""
    slot = int(now.timestamp() // ROUND_SLOT_S)
    return languages[slot % len(languages)]


def endpoints_sync(model_id: str, infos: Iterable[Any], now: datetime) -> list[Endpoint]:
    """Upsert the discovered endpoints of ``model_id`` (``EndpointInfo`` rows from the
    client); endpoints no longer listed are marked inactive, never deleted."""
    seen: list[Endpoint] = []
    with transaction.atomic():
        for info in infos:
            provider, _ = Provider.objects.get_or_create(
                slug=info.provider_slug, defaults={"name": info.provider_name, "first_seen": now, "last_seen": now}
            )
            Provider.objects.filter(pk=provider.pk).update(name=info.provider_name, last_seen=now)
            ep, created = Endpoint.objects.get_or_create(
                model_id=model_id,
                tag=info.tag,
                defaults={"provider": provider, "provider_name": info.provider_name, "first_seen": now, "last_seen": now},
            )
            ep.provider = provider
            ep.provider_name = info.provider_name
            ep.quantization = info.quantization or ""
            ep.context_length = info.context_length
            ep.supported_parameters = list(info.supported_parameters)
            ep.price_prompt_usd = info.pricing_prompt
            ep.price_completion_usd = info.pricing_completion
            ep.active = True
            ep.last_seen = now
            ep.save()
            seen.append(ep)
        Endpoint.objects.filter(model_id=model_id).exclude(pk__in=[e.pk for e in seen]).update(active=False)
    return seen


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


def _excerpt(outcome: ProbeOutcome) -> str:
    if outcome.reply is None or outcome.reply.content is None:
        return ""
    return outcome.reply.content[:EXCERPT_CHARS]


def _result_row(rnd: Round, ep: Endpoint, o: ProbeOutcome, now: datetime) -> ProbeResult:
    call = o.call
    usage = (getattr(call, "usage", None) or {}) if call is not None else {}
    cost = usage.get("cost")
    j = o.judgement
    evidence = dict(j.evidence)
    raw = o.extra.get("raw_judgement")
    raw_verdict = raw.verdict.value if isinstance(raw, Judgement) else j.verdict.value
    return ProbeResult(
        round=rnd,
        endpoint=ep,
        kind=o.kind,
        sample=o.sample,
        language=o.language,
        prompt_id=o.prompt_id,
        verdict=j.verdict.value,
        raw_verdict=raw_verdict,
        check_name=j.check,
        reason=j.reason,
        evidence=_jsonable(evidence),
        ttft_ms=getattr(call, "ttft_ms", None) if call is not None else None,
        total_ms=getattr(call, "total_ms", None) if call is not None else None,
        finish_reason=(o.reply.finish_reason or "") if o.reply is not None else "",
        http_status=getattr(call, "http_status", None) if call is not None else None,
        transport_kind=(getattr(call, "transport_kind", None) or "") if call is not None else "",
        serving_provider=(getattr(call, "serving_provider", None) or "") if call is not None else "",
        generation_id=(getattr(call, "generation_id", None) or "") if call is not None else "",
        reply_excerpt=_excerpt(o),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cost_usd=Decimal(str(cost)) if isinstance(cost, int | float | str) and str(cost) else Decimal(0),
        created_at=now,
    )


def _jsonable(value: Any) -> Any:
    """Evidence must survive a JSON column: judgements and odd values become plain data."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Judgement):
        return {"verdict": value.verdict.value, "check": value.check, "reason": value.reason}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def round_run(
    model_id: str,
    *,
    now: datetime,
    language: str | None = None,
    mode: str | None = None,
    client: Any = None,
) -> Round:
    """Run one canary round of ``model_id`` and return the stored ``Round``.

    Discovery, then every probe of every endpoint concurrently (bounded by
    ``CANARY_CONCURRENCY``), each result saved as it completes (a crash mid-round keeps
    what finished), then round-level judging and the outcomes. ``now`` is the round's
    time (replayable schedules); ``finished_at`` is ``now`` plus the elapsed wall time.
    Raises ``RoundError`` when discovery fails or arguments are bad; the
    failed round is stored with its error.
    """
    if language is not None:
        language = validate_language(language)
    languages = [validate_language(code) for code in settings.CANARY_LANGUAGES]
    lang = language or round_language(now, languages)
    client = client or openrouter_client()
    started = time.monotonic()
    from canary.quarantine import model_config_get, suspension_apply

    if mode is not None and mode not in ("observe", "enforce"):
        raise ValueError(f"unknown mode {mode!r}; expected observe or enforce")
    rnd = Round.objects.create(
        model_id=model_id, language=lang, started_at=now, mode=mode or model_config_get(model_id).mode
    )
    try:
        infos = client.list_endpoints(model_id)
    except Exception as exc:
        rnd.status = Round.Status.FAILED
        rnd.error = f"discovery failed: {exc}"
        rnd.finished_at = now + timedelta(seconds=time.monotonic() - started)
        rnd.save()
        _discovery_failed(rnd, str(exc), now)
        raise RoundError(f"discovery of {model_id} failed: {exc}") from exc
    endpoints = endpoints_sync(model_id, infos, now)
    repeats = {} if language else _language_repeats(model_id)
    s = probe_settings()
    jobs: list[tuple[Endpoint, str, str]] = []
    for ep in endpoints:
        ep_lang = repeats.get(ep.pk, lang)
        for kind in probe_mod.PROBE_KINDS:
            jobs.append((ep, kind, ep_lang))
    by_endpoint: dict[str, list[ProbeOutcome]] = defaultdict(list)
    ep_by_tag = {ep.tag: ep for ep in endpoints}
    with ThreadPoolExecutor(max_workers=max(1, settings.CANARY_CONCURRENCY)) as pool:
        futures = {
            pool.submit(
                probe_mod.probe_run,
                kind,
                client,
                model_id,
                EndpointFacts(ep.tag, ep.provider_name, ep.supports_structured_outputs),
                ep_lang,
                s,
            ): ep
            for ep, kind, ep_lang in jobs
        }
        # Results are written from this thread only: one DB connection, no cross-thread
        # transactions, and each row is committed as soon as its probe finishes.
        for fut in as_completed(futures):
            ep = futures[fut]
            outcomes = fut.result()
            by_endpoint[ep.tag].extend(outcomes)
            ProbeResult.objects.bulk_create([_result_row(rnd, ep, o, now) for o in outcomes])
    controls = {ep.tag: list(ep.positive_control_kinds or []) for ep in endpoints if ep.positive_control_kinds}
    judged = round_judge(
        by_endpoint,
        controls,
        fleet_fail_share=settings.CANARY_FLEET_FAIL_SHARE,
        fleet_min_endpoints=settings.CANARY_FLEET_MIN_ENDPOINTS,
    )
    finished = now + timedelta(seconds=time.monotonic() - started)
    _store_judgement(rnd, ep_by_tag, by_endpoint, judged, finished)
    suspension_apply(rnd, now, mode)
    rnd.refresh_from_db()
    return rnd


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
    ep_by_tag: dict[str, Endpoint],
    by_endpoint: dict[str, list[ProbeOutcome]],
    judged: RoundJudgement,
    now: datetime,
) -> None:
    with transaction.atomic():
        for tag, ev in judged.endpoints.items():
            ep = ep_by_tag[tag]
            for kind in probe_mod.PROBE_KINDS:
                j = ev.final.get(kind)
                if j is None:
                    continue
                evidence = _jsonable({**j.evidence, "fleet_rate": ev.fleet_rates.get(kind)})
                ProbeResult.objects.filter(round=rnd, endpoint=ep, kind=kind, sample=0).update(
                    verdict=j.verdict.value, check_name=j.check, reason=j.reason, evidence=evidence
                )
            for kind in probe_mod.ROUND_CHECKS:
                j = ev.final[kind]
                ProbeResult.objects.update_or_create(
                    round=rnd,
                    endpoint=ep,
                    kind=kind,
                    sample=0,
                    defaults={
                        "language": rnd.language,
                        "prompt_id": "round",
                        "verdict": j.verdict.value,
                        "raw_verdict": j.evidence.get("raw_verdict", j.verdict.value),
                        "check_name": j.check,
                        "reason": j.reason,
                        "evidence": _jsonable({**j.evidence, "fleet_rate": ev.fleet_rates.get(kind)}),
                        "created_at": now,
                    },
                )
            language_outcome = next((o for o in by_endpoint[tag] if o.kind == probe_mod.LANGUAGE and o.sample == 0), None)
            evidence = dict(ev.evidence)
            if language_outcome is not None and language_outcome.extra.get("anomaly"):
                evidence["language_anomaly"] = language_outcome.language
            EndpointRound.objects.create(
                round=rnd,
                endpoint=ep,
                outcome=ev.outcome,
                severity=ev.severity,
                evidence=_jsonable(evidence),
                created_at=now,
            )
        totals = ProbeResult.objects.filter(round=rnd)
        rnd.prompt_tokens = sum(r.prompt_tokens for r in totals)
        rnd.completion_tokens = sum(r.completion_tokens for r in totals)
        rnd.cost_usd = sum((r.cost_usd for r in totals), Decimal(0))
        rnd.weak_probes = judged.weak_probes
        rnd.status = Round.Status.COMPLETED
        rnd.finished_at = now
        rnd.save()
