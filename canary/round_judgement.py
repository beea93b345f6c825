"""The round judgement: decides each probe's final verdict and each endpoint's round
outcome from soft signals across replies, positive controls and fleet attribution.

Pure: takes the probe outcomes of a whole round and returns final verdicts. The rules are
from the issue "Verdicts you can trust" (points 2, 5, 6, 7):

- soft signals (stray leading characters, glued fragments) count only when the same kind
  repeats in at least 2 of 3 or more replies of the endpoint in the round;
- a positive control (an endpoint known to fail a probe kind) that does not fail makes
  that probe *weak* for the round: its passes become ``inconclusive``, failures still count;
- when most endpoints fail the same check on the same prompt, the defect follows the model
  or the prompt: those failures become ``inconclusive`` and the probe is weak;
- outcome: ``fail`` (a confirmed quality failure), ``clean`` (no failure, no transport
  error, at least one conclusive pass), ``frozen`` (transport errors, no quality failure),
  else ``inconclusive`` (no positive evidence, which is not clean).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from canary import judges
from canary.baselines import Baseline, BaselineSettings, CheckDecision, check_decision
from canary.probes import (
    CORRUPTION,
    LEADING_GARBAGE,
    PROBE_KINDS,
    ProbeOutcome,
)
from canary.terms import Outcome
from canary.verdicts import Judgement, Verdict, worst

ROUND_PROMPT = "round"


@dataclass
class EndpointVerdicts:
    """Final verdicts of one endpoint in one round, keyed by kind (probe or round check)."""

    tag: str
    final: dict[str, Judgement] = field(default_factory=dict)
    prompt_ids: dict[str, str] = field(default_factory=dict)
    fleet_rates: dict[str, float] = field(default_factory=dict)
    outcome: Outcome = Outcome.INCONCLUSIVE
    severity: float = 0.0
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RoundJudgement:
    """Everything the round decided: per-endpoint verdicts and the weak probe kinds
    (``{"refusal": "positive control dynamo/bf16 did not fail (pass)"}``)."""

    endpoints: dict[str, EndpointVerdicts]
    weak_probes: dict[str, str]


def round_checks(outcomes: Sequence[ProbeOutcome]) -> dict[str, Judgement]:
    """Judge the soft leading-garbage signal across every reply of the endpoint in the
    round (the structured probe's JSON included: junk glued before a ``{`` is the same
    host defect) and hard corruption across its free-text replies.

    Reads the per-reply inputs each probe stored in ``extra`` (``leading_signature``,
    ``corruption``; see ``canary.probes.round_inputs``), so a round can be finalised
    from stored rows by another process.
    """
    with_text = [o for o in outcomes if "leading_signature" in o.extra]
    corruption_inputs = [o.extra["corruption"] for o in outcomes if isinstance(o.extra.get("corruption"), Judgement)]
    nothing = Judgement(Verdict.INCONCLUSIVE, "no_text", "no text reply to judge this round", {})
    leading = (
        judges.judge_leading_garbage([o.extra["leading_signature"] for o in with_text])
        if with_text
        else replace(nothing, check=LEADING_GARBAGE)
    )
    corruption = worst(corruption_inputs) if corruption_inputs else replace(nothing, check=CORRUPTION)
    return {LEADING_GARBAGE: leading, CORRUPTION: corruption}


_NUMBERS = re.compile(r"\d+(?:[.,]\d+)?")


def failure_signature(j: Judgement) -> str:
    """What makes two failures *the same* failure: the check and its reason with the
    numbers taken out ("The reply is in Spanish (1.00), not Portuguese." and the same
    with 0.97 match; a fenced reply and a missing field do not). A reason that quotes the
    reply's own value (a schema error) is replaced by the judge's ``failure_kind``
    evidence: "feliz" and "alegre" outside one enum are one defect."""
    kind = j.evidence.get("failure_kind")
    return f"{j.check}: {_NUMBERS.sub('#', kind if isinstance(kind, str) else j.reason)}"


def _soften(j: Judgement, reason: str, **evidence: Any) -> Judgement:
    return Judgement(Verdict.INCONCLUSIVE, j.check, f"{reason}; was {j.verdict.value}: {j.reason}", {**j.evidence, **evidence, "raw_verdict": j.verdict.value})


# An endpoint failing more than this share of its own samples is broken, not habitual:
# it is left out of its peers' baseline (docs/baselines.md).
BROKEN_SHARE = 0.5
_BROKEN_MIN_SAMPLES = 4


def peer_baseline(
    kind: str,
    tag: str,
    samples: Mapping[str, Sequence[bool]],
    settings: BaselineSettings,
) -> Baseline:
    """The baseline ``tag`` is judged against for ``kind``: its peers' pooled failures.

    ``samples`` maps each endpoint tag to its judged samples of ``kind`` (True = failed),
    history and this round together, already without suspended endpoints, positive
    controls and frozen probes. Leaves out ``tag`` itself (a host is not its own
    reference) and every peer failing more than ``BROKEN_SHARE`` of at least
    ``_BROKEN_MIN_SAMPLES`` samples (a broken host is no model habit). Pass ``tag=""``
    for the model's baseline as shown.
    """
    failures = trials = 0
    for other, values in samples.items():
        if other == tag or not values:
            continue
        share = sum(values) / len(values)
        if len(values) >= _BROKEN_MIN_SAMPLES and share > BROKEN_SHARE:
            continue
        failures += sum(values)
        trials += len(values)
    return Baseline(kind, failures, trials, trials >= settings.min_volume)


def decision_of(evidence: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    """The baseline decision stored for ``kind`` in an ``EndpointRound.evidence`` (the
    check, its failures and samples, the baseline rate and volume, the P value, the
    threshold and alpha, the reason), or None when the round decided no failure of it."""
    found = evidence.get("baselines", {}).get(kind) if isinstance(evidence.get("baselines"), Mapping) else None
    return dict(found) if isinstance(found, Mapping) else None


def _decision_data(d: CheckDecision, baseline: Baseline) -> dict[str, Any]:
    return {
        "check": d.kind, "stands": d.stands, "failures": d.failures, "samples": d.samples,
        "baseline_rate": round(d.rate, 4), "baseline_trials": baseline.trials,
        "established": baseline.established, "p_value": d.p_value, "threshold": d.threshold,
        "alpha": d.alpha, "reason": d.reason,
    }


def round_judge(
    by_endpoint: Mapping[str, Sequence[ProbeOutcome]],
    controls: Mapping[str, Sequence[str]],
    *,
    fleet_fail_share: float = 0.5,
    fleet_min_endpoints: int = 3,
    history: Mapping[tuple[str, str], Sequence[bool]] | None = None,
    peer_history: Mapping[tuple[str, str], Sequence[bool]] | None = None,
    baseline_settings: BaselineSettings | None = None,
) -> RoundJudgement:
    """Turn a round's probe outcomes into final verdicts and outcomes.

    ``by_endpoint`` maps tag -> that endpoint's probe outcomes (all kinds, all samples);
    ``controls`` maps tag -> the probe kinds it is a positive control for. A kind's
    verdict is the sample-0 outcome's judgement. Fleet attribution applies when more than
    ``fleet_fail_share`` of the endpoints judged on a prompt fail the same check there,
    and at least ``fleet_min_endpoints`` do.

    With ``baseline_settings``, every remaining failure is held against the model's
    baseline (``canary.baselines.check_decision``; docs/baselines.md): ``history`` maps
    (tag, kind) to the endpoint's earlier judged samples, oldest first (True = failed),
    without positive controls and frozen probes; ``peer_history`` the same without the
    rounds an endpoint spent suspended, the pool of its peers' baseline (default:
    ``history``). A failure that is
    not improbable under its peers' rate becomes ``inconclusive``; every decision is kept
    in the endpoint's evidence under ``baselines`` (read it with ``decision_of``).
    """
    result: dict[str, EndpointVerdicts] = {}
    for tag, outcomes in by_endpoint.items():
        ev = EndpointVerdicts(tag)
        for o in outcomes:
            if o.sample == 0:
                ev.final[o.kind] = o.judgement
                ev.prompt_ids[o.kind] = o.prompt_id
        ev.final.update(round_checks(outcomes))
        ev.prompt_ids[LEADING_GARBAGE] = ev.prompt_ids[CORRUPTION] = ROUND_PROMPT
        result[tag] = ev

    weak: dict[str, str] = {}
    # Positive controls: a control that does not fail its kind means the probe cannot see
    # the defect this round, so its passes are no evidence of health.
    for tag, kinds in controls.items():
        if tag not in result:
            continue
        for kind in kinds:
            got = result[tag].final.get(kind)
            if got is None:
                continue
            if got.verdict != Verdict.FAIL:
                weak[kind] = f"positive control {tag} did not fail ({got.verdict.value})"
    for kind, why in weak.items():
        for tag, ev in result.items():
            if kind in controls.get(tag, ()):
                continue
            j = ev.final.get(kind)
            if j is not None and j.verdict == Verdict.PASS:
                ev.final[kind] = _soften(j, f"probe weak this round ({why})", weak_probe=True)

    # The fleet's rate beside every failure (same check, same prompt), and fleet
    # attribution, which needs the *same* failure: endpoints broken in different ways (one
    # fences its JSON, one drops a field, one is filtered) are not a model-wide defect.
    judged: dict[tuple[str, str], list[str]] = defaultdict(list)
    failing: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    same_failure: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for tag, ev in result.items():
        for kind, j in ev.final.items():
            if kind in controls.get(tag, ()):
                continue
            prompt_id = ev.prompt_ids.get(kind, "")
            if j.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE):
                judged[(kind, prompt_id)].append(tag)
            if j.verdict == Verdict.FAIL:
                failing[(kind, prompt_id, j.check)].append(tag)
                same_failure[(kind, prompt_id, failure_signature(j))].append(tag)
    for (kind, prompt_id, _check), tags in failing.items():
        n = len(judged[(kind, prompt_id)])
        for tag in tags:
            result[tag].fleet_rates[kind] = round(len(tags) / n, 3) if n else 0.0
    for (kind, prompt_id, check), tags in same_failure.items():
        n = len(judged[(kind, prompt_id)])
        rate = len(tags) / n if n else 0.0
        if n and len(tags) >= fleet_min_endpoints and rate > fleet_fail_share:
            weak[kind] = (
                f"fleet attribution: {len(tags)} of {n} endpoints failed {check} on prompt "
                f"{prompt_id}: the defect follows the model or the prompt"
            )
            for tag in tags:
                ev = result[tag]
                ev.final[kind] = _soften(ev.final[kind], "attributed to the fleet", fleet_rate=round(rate, 3))

    decisions: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    if baseline_settings is not None:
        own = history or {}
        decisions = _baseline_decisions(result, controls, own, own if peer_history is None else peer_history, baseline_settings)

    for tag, ev in result.items():
        counted = {k: j for k, j in ev.final.items() if k not in controls.get(tag, ())}
        fails = [k for k, j in counted.items() if j.verdict == Verdict.FAIL]
        transport = [k for k, j in counted.items() if j.verdict == Verdict.TRANSPORT_ERROR]
        # Positive evidence comes from the four contract probes; the round-level checks
        # only say that no defect showed in those same replies.
        passes = [k for k, j in counted.items() if j.verdict == Verdict.PASS and k in PROBE_KINDS]
        if fails:
            ev.outcome = Outcome.FAIL
        elif transport:
            ev.outcome = Outcome.FROZEN
        elif passes:
            ev.outcome = Outcome.CLEAN
        else:
            ev.outcome = Outcome.INCONCLUSIVE
        ev.severity = float(len(fails))
        ev.evidence = {
            "failed": {k: {"check": counted[k].check, "reason": counted[k].reason, "fleet_rate": ev.fleet_rates.get(k)} for k in fails},
            "transport_errors": transport,
            "passed": passes,
            "controls": list(controls.get(tag, ())),
        }
        if decisions.get(tag):
            ev.evidence["baselines"] = decisions[tag]
    return RoundJudgement(result, weak)


def _baseline_decisions(
    result: dict[str, EndpointVerdicts],
    controls: Mapping[str, Sequence[str]],
    history: Mapping[tuple[str, str], Sequence[bool]],
    peer_history: Mapping[tuple[str, str], Sequence[bool]],
    settings: BaselineSettings,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Hold each failure against its peers' baseline; soften those within the habit."""
    kinds = {kind for ev in result.values() for kind in ev.final}
    decisions: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for kind in sorted(kinds):
        own: dict[str, list[bool]] = {}
        pool: dict[str, list[bool]] = {}
        for tag, ev in result.items():
            if kind in controls.get(tag, ()):
                continue
            j = ev.final.get(kind)
            raw = j.evidence.get("raw_verdict", j.verdict.value) if j is not None else None
            now = [raw == Verdict.FAIL.value] if raw in (Verdict.PASS.value, Verdict.FAIL.value) else []
            own[tag] = list(history.get((tag, kind), ())) + now
            pool[tag] = list(peer_history.get((tag, kind), ())) + now
        for tag, ev in result.items():
            j = ev.final.get(kind)
            if j is None or j.verdict != Verdict.FAIL or kind in controls.get(tag, ()):
                continue
            baseline = peer_baseline(kind, tag, pool, settings)
            decided = check_decision(kind, own[tag] or [True], baseline, settings)
            decisions[tag][kind] = _decision_data(decided, baseline)
            if not decided.stands:
                ev.final[kind] = _soften(j, decided.reason, baseline_rate=round(decided.rate, 4), p_value=decided.p_value)
    return decisions


__all__ = [
    "EndpointVerdicts",
    "RoundJudgement",
    "decision_of",
    "failure_signature",
    "peer_baseline",
    "round_checks",
    "round_judge",
]
