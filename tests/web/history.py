"""A generated canary history for the dashboards' tests and bench.

Writes what the canary itself writes (rounds, probe results, per-round outcomes, policy
states, audit rows) for the 15 endpoints of the default fleet, a round every 30 minutes,
with each host failing the way its fleet fault makes it fail. Deterministic (seeded), bulk
inserts, so 30 days × 48 rounds × 15 endpoints take seconds, not the hours real rounds would.

The policy here is deliberately simple (two failing rounds suspend for a day, two clean
rounds restore): these rows are fixtures for reading pages, not a test of the policy.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from canary.judges import leading_signature
from canary.models import (
    Decision,
    Endpoint,
    EndpointPolicyState,
    EndpointRound,
    ModelConfig,
    ProbeResult,
    Provider,
    Round,
)

MODEL = "meta-llama/llama-3.3-70b-instruct"
FLEET = Path(__file__).resolve().parents[1] / "fixtures" / "fleets" / "default.json"
SLOT = timedelta(minutes=30)
LANGUAGES = ("en", "pt", "es", "fr", "de", "it")
KINDS = ("ttft", "refusal", "structured_output", "language", "leading_garbage", "corruption")
# kind -> the check that fails, and its reason (what the judges write).
FAIL_CHECKS = {
    "ttft": ("ttft_limit", "First token after {ttft:.0f} ms, over the 10000 ms limit."),
    "refusal": ("refusal_pattern", "The reply refuses a harmless request."),
    "structured_output": ("schema_missing_field", "The JSON lacks the required field 'mood'."),
    "language": ("language_shift", "Half of the reply is Spanish in a {lang} conversation."),
    "leading_garbage": ("leading_punctuation", "The reply starts with a stray ','."),
    "corruption": ("mojibake", "Mojibake: 'Ã©' where 'é' was meant."),
}
PASS_CHECKS = {
    "ttft": "ttft_limit", "refusal": "refusal_pattern", "structured_output": "schema",
    "language": "language_shift", "leading_garbage": "leading_punctuation", "corruption": "corruption",
}
EXCERPTS = {
    "ok": "Claro! A lua estava cheia naquela noite, e a personagem sorriu antes de responder.",
    "leading_garbage": ", Claro! A lua estava cheia naquela noite.",
    "language": "Claro! La luna estaba llena esa noche, y el personaje sonrió antes de responder.",
    "corruption": "Claro! A lua estava cheia naquela noite, e a personagem sorriu â€” Ã© isso.",
    "refusal": "I'm sorry, but I can't help with that request.",
    "structured_output": '{"name": "Aria", "age": 27}',
}


@dataclass
class Profile:
    """How one endpoint behaves: ``fails`` {kind: rate}, transport error rate, TTFT range (ms)."""

    fails: dict[str, float] = field(default_factory=dict)
    transport: float = 0.0
    ttft: tuple[float, float] = (400.0, 1600.0)


def _profile(faults: dict) -> Profile:
    p = Profile()
    for name, spec in faults.items():
        rate = float(spec.get("rate", 1.0)) if isinstance(spec, dict) else 1.0
        if name == "leading_garbage":
            p.fails["leading_garbage"] = rate
        elif name == "language_drift":
            p.fails["language"] = rate
        elif name == "refusal":
            p.fails["refusal"] = rate
        elif name == "structured_output":
            p.fails["structured_output"] = 1.0
        elif name == "mojibake":
            p.fails["corruption"] = rate
        elif name == "ttft_ms":
            p.ttft = (float(spec[0]), float(spec[1]))
        elif name in ("http_error", "timeout", "midstream_error"):
            p.transport = min(0.9, p.transport + rate)
    return p


@dataclass
class _State:
    fail_streak: int = 0
    clean_streak: int = 0
    suspended_until: datetime | None = None
    enforced: bool = False
    level: int = 0
    last_suspended_at: datetime | None = None


def fleet_endpoints(now: datetime, model_id: str = MODEL, count: int = 15) -> list[tuple[Endpoint, Profile]]:
    """The default fleet's endpoints (created if missing) with their fault profiles; the
    content-filtering host (``dynamo/bf16``) is the refusal probe's positive control."""
    fleet = json.loads(FLEET.read_text())
    out = []
    for spec in fleet["models"][0]["endpoints"][:count]:
        slug = spec["tag"].split("/")[0]
        provider, _ = Provider.objects.get_or_create(
            slug=slug, defaults={"name": spec["provider"], "first_seen": now, "last_seen": now}
        )
        ep, _ = Endpoint.objects.get_or_create(
            model_id=model_id,
            tag=spec["tag"],
            defaults={
                "provider": provider,
                "provider_name": spec["provider"],
                "quantization": spec.get("quantization", ""),
                "supported_parameters": spec.get("supported_parameters", []),
                "positive_control_kinds": ["refusal"] if spec["tag"] == "dynamo/bf16" else [],
                "first_seen": now,
                "last_seen": now,
            },
        )
        out.append((ep, _profile(spec.get("faults") or {})))
    return out


def history_build(
    *,
    start: datetime,
    end: datetime,
    model_id: str = MODEL,
    mode: str = "observe",
    endpoints: int = 15,
    seed: int = 7,
    weak_every: int = 37,
    fp_every: int = 4,
) -> dict[str, int]:
    """Write rounds every 30 minutes in [start, end) for ``endpoints`` fleet endpoints.

    ``mode`` is the rounds' mode: ``observe`` records would-suspend decisions (every
    ``fp_every``-th of which is marked a false positive), ``enforce`` real suspensions.
    Every ``weak_every``-th round the positive control passes and the refusal probe is weak.
    Policy states are left as the last round decided them. Returns row counts.
    """
    rng = random.Random(seed)
    fleet = fleet_endpoints(start, model_id, endpoints)
    ModelConfig.objects.update_or_create(model_id=model_id, defaults={"mode": mode})
    states = {ep.pk: _State() for ep, _ in fleet}
    times = []
    t = start
    while t < end:
        times.append(t)
        t += SLOT
    rounds = Round.objects.bulk_create(
        [
            Round(
                model_id=model_id, language=LANGUAGES[i % len(LANGUAGES)], started_at=at,
                finished_at=at + timedelta(seconds=14), status="completed", mode=mode,
                # By slot number, so histories built in pieces agree on the weak rounds.
                weak_probes=(
                    {"refusal": "positive control dynamo/bf16 did not fail (pass)"}
                    if weak_every and int(at.timestamp() // SLOT.total_seconds()) % weak_every == 0 else {}
                ),
                prompt_tokens=15 * 900, completion_tokens=15 * 1400, cost_usd=Decimal("0.0123"),
            )
            for i, at in enumerate(times)
        ],
        batch_size=1000,
    )
    results: list[ProbeResult] = []
    outcomes: list[EndpointRound] = []
    decisions: list[Decision] = []
    counts = {"rounds": len(rounds), "results": 0, "endpoint_rounds": 0, "decisions": 0}
    for rnd in rounds:
        weak = bool(rnd.weak_probes)
        for ep, prof in fleet:
            frozen = rng.random() < prof.transport
            failed: dict[str, dict] = {}
            controls = ep.positive_control_kinds or []
            # Decided up front: a host's leading garbage or corruption shows in its probes'
            # replies, which the round-level checks then judge.
            faulty = {
                kind for kind, rate in prof.fails.items()
                if rng.random() < rate and not (weak and kind in controls)
            }
            garbled = "leading_garbage" if "leading_garbage" in faulty else (
                "corruption" if "corruption" in faulty else "")
            for kind in KINDS:
                verdict, check, reason = "pass", PASS_CHECKS[kind], "No problem found."
                ttft = None
                excerpt = EXCERPTS[garbled or "ok"]
                transport_kind, http_status = "", 200
                if kind in ("ttft", "refusal", "structured_output", "language"):
                    ttft = rng.uniform(*prof.ttft)
                if frozen and kind not in ("leading_garbage", "corruption"):
                    verdict, check, reason = "transport_error", "transport", "HTTP 429 rate limited"
                    transport_kind, http_status, ttft, excerpt = "rate_limited", 429, None, ""
                elif kind == "ttft" and ttft is not None and ttft > 10000:
                    check, tmpl = FAIL_CHECKS["ttft"]
                    verdict, reason = "fail", tmpl.format(ttft=ttft)
                elif kind in faulty:
                    check, tmpl = FAIL_CHECKS[kind]
                    verdict, reason = "fail", tmpl.format(ttft=ttft or 0, lang=rnd.language)
                    excerpt = EXCERPTS.get(kind, excerpt)
                if weak and kind == "refusal" and verdict == "pass" and kind not in controls:
                    verdict, reason = "inconclusive", "probe weak this round (positive control passed)"
                if "leading_garbage" in faulty and excerpt and kind not in ("leading_garbage", "corruption"):
                    excerpt = ", " + excerpt  # the host's junk opener, on every reply
                fleet_rate = round(1 / len(fleet), 3) if verdict == "fail" else None
                if verdict == "fail" and kind not in controls:
                    failed[kind] = {"check": check, "reason": reason, "fleet_rate": fleet_rate}
                results.append(
                    ProbeResult(
                        round=rnd, endpoint=ep, kind=kind, sample=0, language=rnd.language,
                        prompt_id=f"{kind}-1", verdict=verdict, raw_verdict=verdict, check_name=check,
                        reason=reason, evidence={"fleet_rate": fleet_rate, "check": check},
                        ttft_ms=ttft, total_ms=(ttft or 0) + 900 if ttft else None,
                        finish_reason="stop" if not transport_kind else "", http_status=http_status,
                        transport_kind=transport_kind, serving_provider=ep.provider_name,
                        generation_id=f"gen-{rnd.pk}-{ep.pk}-{kind}" if not transport_kind else "",
                        reply_excerpt=excerpt if kind not in ("leading_garbage", "corruption") else "",
                        # As the probes store it: the junk each reply starts with.
                        leading_signature=leading_signature(excerpt) if kind not in ("leading_garbage", "corruption") and excerpt else None,
                        prompt_tokens=60, completion_tokens=90, cost_usd=Decimal("0.00004"),
                        created_at=rnd.started_at,
                    )
                )
                if kind == "language" and "language" in prof.fails and verdict == "fail":
                    # The language probe's confirmation sample, as the canary takes one.
                    results.append(
                        ProbeResult(
                            round=rnd, endpoint=ep, kind=kind, sample=1, language=rnd.language,
                            prompt_id="language-2", verdict="fail", raw_verdict="fail", check_name=check,
                            reason=reason, evidence={}, ttft_ms=ttft, serving_provider=ep.provider_name,
                            reply_excerpt=EXCERPTS["language"], created_at=rnd.started_at,
                        )
                    )
            outcome = "fail" if failed else ("frozen" if frozen else "clean")
            action, until = _policy(states[ep.pk], outcome, rnd.started_at, mode)
            outcomes.append(
                EndpointRound(
                    round=rnd, endpoint=ep, outcome=outcome, severity=float(len(failed)),
                    evidence={"failed": failed, "transport_errors": [], "passed": [], "controls": controls},
                    streak=states[ep.pk].fail_streak, action=action, suspended_until=until,
                    created_at=rnd.started_at,
                )
            )
            if action != "none":
                decisions.append(
                    Decision(
                        model_id=model_id, endpoint=ep, round=rnd, action=action, mode=mode, actor="canary",
                        reason=f"{outcome}: {', '.join(failed) or 'clean rounds'}",
                        evidence={"round": rnd.pk, "outcome": outcome}, suspended_until=until,
                        created_at=rnd.started_at,
                    )
                )
        if len(results) > 20000:
            counts["results"] += len(ProbeResult.objects.bulk_create(results, batch_size=2000))
            results = []
    counts["results"] += len(ProbeResult.objects.bulk_create(results, batch_size=2000))
    counts["endpoint_rounds"] = len(EndpointRound.objects.bulk_create(outcomes, batch_size=2000))
    created = Decision.objects.bulk_create(decisions, batch_size=2000)
    would = [d for d in created if d.action in ("would_suspend", "suspended")]
    fps = [
        Decision(
            model_id=model_id, endpoint_id=d.endpoint_id, round_id=d.round_id, refers_to=d,
            action="false_positive", actor="reviewer", reason="the host was fine; flaky probe",
            evidence={"decision": d.pk}, created_at=d.created_at + timedelta(hours=1),
        )
        for i, d in enumerate(would)
        if fp_every and i % fp_every == 0
    ]
    Decision.objects.bulk_create(fps)
    counts["decisions"] = len(created) + len(fps)
    for ep, _ in fleet:
        s = states[ep.pk]
        EndpointPolicyState.objects.update_or_create(
            endpoint=ep,
            defaults={
                "fail_streak": s.fail_streak, "clean_streak": s.clean_streak,
                "suspended_until": s.suspended_until, "enforced": s.enforced,
                "suspension_level": s.level, "last_suspended_at": s.last_suspended_at,
            },
        )
    return counts


def _policy(s: _State, outcome: str, now: datetime, mode: str) -> tuple[str, datetime | None]:
    """Two failing rounds suspend for a day; two clean rounds or the end of it restore."""
    if s.suspended_until is not None and s.suspended_until <= now:
        s.suspended_until, s.fail_streak, s.clean_streak = None, 0, 0
        return "expired", None
    if outcome == "fail":
        s.fail_streak += 1
        s.clean_streak = 0
        if s.suspended_until is None and s.fail_streak >= 2:
            s.suspended_until = now + timedelta(days=1)
            s.enforced = mode == "enforce"
            s.level += 1
            s.last_suspended_at = now
            return ("suspended" if s.enforced else "would_suspend"), s.suspended_until
    elif outcome == "clean":
        s.clean_streak += 1
        s.fail_streak = 0
        if s.suspended_until is not None and s.clean_streak >= 2:
            s.suspended_until = None
            return "restored", None
    return "none", None
