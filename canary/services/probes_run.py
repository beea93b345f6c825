"""Run and store the probes of a round's endpoints: the one path that the Celery task
(one endpoint) and the manual round (every endpoint) share.

Deduplication (a redelivered task runs only what has not reported), the per-provider
rate limit, the thread pool and the hand-back of the database connection during the
network waits all live here, once.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from canary import probes as probe_mod
from canary.db import connection_release, rows_insert, text_fields_fit
from canary.judges._guard import json_safe
from canary.models import Endpoint, ProbeResult, Round
from canary.probes import EndpointFacts, ProbeOutcome
from canary.ratelimit import provider_limiter
from canary.services.client import openrouter_client, probe_settings
from canary.verdicts import Judgement, Verdict
from core.language_detector import get_detector
from openrouter.client import OpenRouterClient
from openrouter.values import usage_cost, usage_tokens

EXCERPT_CHARS = 600
NO_TEXT = object()  # a reply without text: no leading signature to judge
RATE_LIMIT_WAIT = "rate_limit_wait_ms"
# The process's probe threads at most (``probe_threads``): more than a worker's endpoint
# tasks ever have in flight (a task of 10 endpoints needs 50; ``-c 32`` tasks, 1,600).
PROBE_THREADS = 2048

_threads: ThreadPoolExecutor | None = None
_threads_pid = 0
_threads_lock = threading.Lock()


def probe_threads() -> ThreadPoolExecutor:
    """The process's pool of threads that wait on providers for probes (at most
    ``PROBE_THREADS``), kept from one endpoint task to the next; a new one after a fork.

    Kept because a thread started for one task and joined at its end cost about 0.2 ms
    of CPU more than a reused one (``bench/probe_threads.py``), and a task of 10
    endpoints used 50 threads (40 probes, 10 admissions). Its queue is first in, first
    out, and ``endpoint_probes_run`` queues an endpoint's admission before that
    endpoint's probes, which wait on it: the admission always has a thread by the time
    one of its probes does, at any pool size.
    """
    global _threads, _threads_pid
    with _threads_lock:
        if _threads is None or _threads_pid != os.getpid():
            _threads = ThreadPoolExecutor(max_workers=PROBE_THREADS, thread_name_prefix="probe")
            _threads_pid = os.getpid()
        return _threads


@dataclass(frozen=True)
class ProbeJob:
    """One probe to run: ids only, so it can travel in a Celery message."""

    round_id: int
    endpoint_id: int
    kind: str
    language: str


def endpoint_facts(ep: Endpoint) -> EndpointFacts:
    """What a probe needs to know of an endpoint row."""
    return EndpointFacts(ep.tag, ep.provider_name, ep.supports_structured_outputs)


def judgement_data(j: Judgement) -> dict[str, Any]:
    """A judgement as JSON data for a column: ``{"verdict", "check", "reason", "evidence"}``."""
    return {"verdict": j.verdict.value, "check": j.check, "reason": j.reason, "evidence": json_safe(j.evidence)}


def evidence_data(value: Any) -> Any:
    """Evidence made storable in a jsonb column: judgements become plain data, strings
    lose NUL and lone surrogates (PostgreSQL's jsonb rejects them)."""
    if isinstance(value, Judgement):
        return judgement_data(value)
    if isinstance(value, dict):
        return {str(k): evidence_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [evidence_data(v) for v in value]
    return json_safe(value)


def probe_execute(
    job: ProbeJob, ep: Endpoint, client: OpenRouterClient | None = None, *, waited_s: float | None = None,
) -> list[ProbeOutcome]:
    """Run one probe job without touching the database: wait for the provider's rate
    limit, pin the endpoint, judge. Never raises for upstream faults (they are verdicts).
    The first outcome's ``extra[RATE_LIMIT_WAIT]`` is the rate limit's wait in ms;
    ``waited_s`` says the caller took the job's place in the rate limit already (and
    waited that long, s)."""
    if waited_s is None:
        waited_s = provider_limiter().acquire(ep.provider.slug)
    outcomes = probe_mod.probe_run(
        job.kind, client or openrouter_client(), ep.model_id, endpoint_facts(ep), job.language, probe_settings()
    )
    if outcomes:
        # The rate limit held the probe's first request only (its samples follow it).
        outcomes[0].extra[RATE_LIMIT_WAIT] = waited_s * 1000.0
    return outcomes


def _admitted_probe(admission: Future[float], job: ProbeJob, ep: Endpoint, client: OpenRouterClient) -> list[ProbeOutcome]:
    """``probe_execute`` once the endpoint's places in the rate limit are taken
    (``admission``: the wait in s)."""
    return probe_execute(job, ep, client, waited_s=admission.result())


def _result_row(rnd: Round, ep: Endpoint, o: ProbeOutcome, now: datetime) -> ProbeResult:
    """The row of one probe outcome: the probe's verdict and the round judgement's
    inputs, each in its column; the final ``verdict`` is the round judgement's to write."""
    call = o.call
    usage = (call.usage or {}) if call is not None else {}
    # The host's usage, each value unknown (0) unless it is one a reply can have.
    cost = usage_cost(usage.get("cost"))
    j = o.judgement
    raw = o.extra.get("raw_judgement")
    corruption = o.extra.get("corruption")
    signature = o.extra.get("leading_signature", NO_TEXT)
    return text_fields_fit(ProbeResult(
        round=rnd,
        endpoint=ep,
        kind=o.kind,
        sample=o.sample,
        language=o.language,
        prompt_id=o.prompt_id,
        probe_verdict=j.verdict.value,
        raw_verdict=raw.verdict.value if isinstance(raw, Judgement) else j.verdict.value,
        check_name=j.check,
        reason=j.reason,
        evidence=evidence_data(j.evidence),
        leading_signature=None if signature is NO_TEXT else (signature or ""),
        corruption=judgement_data(corruption) if isinstance(corruption, Judgement) else None,
        language_anomaly=bool(o.extra.get("anomaly")),
        ttft_ms=call.ttft_ms if call is not None else None,
        total_ms=call.total_ms if call is not None else None,
        wait_ms=_wait_ms(o),
        finish_reason=(o.reply.finish_reason or "") if o.reply is not None else "",
        http_status=call.http_status if call is not None else None,
        transport_kind=(call.transport_kind or "") if call is not None else "",
        serving_provider=(call.serving_provider or "") if call is not None else "",
        generation_id=(call.generation_id or "") if call is not None else "",
        reply_excerpt=(o.reply.content or "")[:EXCERPT_CHARS] if o.reply is not None else "",
        prompt_tokens=usage_tokens(usage.get("prompt_tokens")) or 0,
        completion_tokens=usage_tokens(usage.get("completion_tokens")) or 0,
        cost_usd=Decimal(str(cost)) if cost is not None else Decimal(0),
        created_at=now,
    ))


def _wait_ms(o: ProbeOutcome) -> float | None:
    """Our side's wait before the probe's request was on the wire, in ms: the rate
    limit's plus the client's (``Call.wait_ms``); None when neither was measured."""
    parts = [w for w in (o.extra.get(RATE_LIMIT_WAIT), o.call.wait_ms if o.call is not None else None) if w is not None]
    return sum(parts) if parts else None


def judgement_from_data(data: Any) -> Judgement | None:
    """The inverse of ``judgement_data`` (None for anything that is not one)."""
    if not isinstance(data, dict) or "verdict" not in data:
        return None
    return Judgement(Verdict(data["verdict"]), data.get("check", ""), data.get("reason", ""), data.get("evidence") or {})


def round_inputs_of(row: ProbeResult) -> ProbeOutcome:
    """What the round judgement reads of a stored probe result: its probe verdict and
    the per-reply inputs from their columns (``canary.probes.round_inputs``' shape)."""
    extra: dict[str, Any] = {}
    if row.leading_signature is not None:
        extra["leading_signature"] = row.leading_signature or None
    corruption = judgement_from_data(row.corruption)
    if corruption is not None:
        extra["corruption"] = corruption
    if row.language_anomaly:
        extra["anomaly"] = True
    judgement = Judgement(Verdict(row.probe_verdict), row.check_name, row.reason, dict(row.evidence or {}))
    return ProbeOutcome(row.kind, row.sample, row.language, row.prompt_id, judgement, extra=extra)


def probe_record(rnd: Round, ep: Endpoint, outcomes: Sequence[ProbeOutcome], now: datetime) -> None:
    """Store a probe's results; a redelivered probe never creates a second result (the
    unique constraint on round, endpoint, kind and sample; conflicts are ignored)."""
    rows_insert([_result_row(rnd, ep, o, now) for o in outcomes])


def endpoint_probes_run(
    rnd: Round,
    jobs: Sequence[ProbeJob],
    *,
    client: OpenRouterClient | None = None,
    max_workers: int | None = None,
) -> int:
    """Run ``jobs`` (probes of ``rnd`` on one or more endpoints) that have not reported
    yet and store each endpoint's results once all of its probes are in: one bulk
    INSERT per endpoint (an endpoint's four probes are one statement; a crash
    mid-round keeps the endpoints that finished, and a redelivered task runs the
    endpoint again). Returns the number of probes run.

    Each endpoint's probes pass the per-provider rate limit together (``Limiter.acquire``
    with their count; the endpoints side by side), then wait on the network in threads
    that never touch the database: the process's ``probe_threads`` or, with
    ``max_workers``, a pool of that many for this call only (the manual round's
    ``CANARY_CONCURRENCY``). Rows are read before and written from the calling thread
    only (one connection, no cross-thread transactions), and that connection goes back
    to the pool during the waits (``connection_release``). Raises what a probe's
    admission or the storing raised (the Redis or database error); probes not started
    by then are cancelled.
    """
    reported = set(
        ProbeResult.objects.filter(round=rnd, sample=0, endpoint_id__in={j.endpoint_id for j in jobs})
        .values_list("endpoint_id", "kind")
    )
    todo = [job for job in jobs if (job.endpoint_id, job.kind) not in reported]
    if not todo:
        return 0
    endpoints = {ep.pk: ep for ep in Endpoint.objects.filter(pk__in={j.endpoint_id for j in todo}).select_related("provider")}
    client = client or openrouter_client()
    # lingua's first build (its models load in native code, holding the GIL) stalls every
    # other thread for seconds; done before the streams open, it cannot stall the event
    # loop reading them into a false idle timeout. Workers build it at start
    # (reverie_ops/celery.py); this covers the manual round and the demo. Later calls are free.
    get_detector()
    connection_release()
    if max_workers is None:
        _probes_in(probe_threads(), rnd, todo, endpoints, client)
    else:
        with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
            _probes_in(pool, rnd, todo, endpoints, client)
    return len(todo)


def _probes_in(pool: Executor, rnd: Round, todo: Sequence[ProbeJob], endpoints: dict[int, Endpoint], client: OpenRouterClient) -> None:
    """``endpoint_probes_run``'s probes of ``todo`` on ``pool``; each endpoint's results
    stored from this thread once all of its probes are in."""
    left = Counter(job.endpoint_id for job in todo)
    done: dict[int, list[ProbeOutcome]] = defaultdict(list)
    limiter = provider_limiter()
    # An endpoint's probes take their places in its provider's window together (one
    # Redis round trip per endpoint), and the endpoints of one task are admitted side
    # by side: one waiting for its provider's next window holds up no other. Admissions
    # are queued first: a probe waits on its endpoint's admission (``probe_threads``).
    admissions = {
        endpoint_id: pool.submit(limiter.acquire, endpoints[endpoint_id].provider.slug, count)
        for endpoint_id, count in left.items()
    }
    futures: dict[Future[list[ProbeOutcome]], ProbeJob] = {
        pool.submit(_admitted_probe, admissions[job.endpoint_id], job, endpoints[job.endpoint_id], client): job
        for job in todo
    }
    try:
        for fut in as_completed(futures):
            endpoint_id = futures[fut].endpoint_id
            done[endpoint_id] += fut.result()
            left[endpoint_id] -= 1
            if not left[endpoint_id]:
                probe_record(rnd, endpoints[endpoint_id], done.pop(endpoint_id), rnd.started_at)
                connection_release()
    except BaseException:
        for admission in admissions.values():
            admission.cancel()
        for pending in futures:
            pending.cancel()
        raise


def round_probes_done(rnd: Round) -> bool:
    """Have all of the round's planned probes (``rnd.expected_probes``) reported? One
    COUNT over the round's first samples."""
    reported = ProbeResult.objects.filter(round_id=rnd.pk, sample=0, kind__in=probe_mod.PROBE_KINDS).count()
    return reported >= rnd.expected_probes
