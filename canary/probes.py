"""The four probes: what each sends to a pinned endpoint and how its reply is judged.

Pure of Django: a probe takes the OpenRouter client (anything with ``chat_pinned``), the
endpoint's facts and the settings as arguments, and returns ``ProbeOutcome`` rows for the
caller to store. Judging lives in ``canary.judges``; this module maps a call's transport
outcome to a verdict and runs the confirmation samples of the language probe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from canary import judges
from canary.prompts import (
    STATE_SCHEMA,
    Prompt,
    refusal_prompt,
    response_format,
    scene_prompt,
    structured_prompt,
)
from canary.verdicts import Judgement, Reply, Verdict
from openrouter.notsse import MALFORMED_BODY
from openrouter.result import Call

log = logging.getLogger(__name__)

TTFT = "ttft"
REFUSAL = "refusal"
STRUCTURED = "structured_output"
LANGUAGE = "language"
PROBE_KINDS: tuple[str, ...] = (TTFT, REFUSAL, STRUCTURED, LANGUAGE)
# Round-level checks judged across an endpoint's text replies.
LEADING_GARBAGE = "leading_garbage"
CORRUPTION = "corruption"
ROUND_CHECKS: tuple[str, ...] = (LEADING_GARBAGE, CORRUPTION)
ALL_KINDS: tuple[str, ...] = PROBE_KINDS + ROUND_CHECKS

# Two more samples after a language anomaly or a malformed body; the majority of three
# decides.
CONFIRMATION_SAMPLES = 2
# The check of a completed HTTP 200 whose body or SSE frame never parsed: the endpoint was
# reachable and produced malformed output, a degradation, not a transport error. One term
# with the gateway's failure reason (``openrouter.notsse``).
# How much of the provider's error message a transport-error reason quotes (characters).
REASON_MESSAGE_CHARS = 200


class ChatClient(Protocol):
    """What a probe needs from ``openrouter.client.OpenRouterClient``."""

    def chat_pinned(
        self,
        model_id: str,
        tag: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        temperature: float | None = ...,
        stream: bool,
        response_format: Mapping[str, Any] | None = ...,
        require_parameters: bool = ...,
        ttft_limit_s: float,
        total_timeout_s: float,
        seed: int | None = ...,
        expected_provider: str | None = ...,
    ) -> Call: ...


@dataclass(frozen=True)
class EndpointFacts:
    """What a probe knows of the endpoint it pins: tag, display name, capabilities."""

    tag: str
    provider_name: str
    supports_structured_outputs: bool


@dataclass(frozen=True)
class ProbeSettings:
    """Probe limits: TTFT limit and total timeout in s, ``max_tokens`` per probe (the
    response size cap belongs to the client, ``CANARY_MAX_RESPONSE_BYTES``)."""

    ttft_limit_s: float = 10.0
    total_timeout_s: float = 45.0
    max_tokens: int = 600
    temperature: float = 0.7


@dataclass
class ProbeOutcome:
    """One stored probe result (one request), before round-level adjustments.

    ``judgement`` is the verdict on this reply (for sample 0 of the language probe: the
    majority decision over all samples). ``call`` is the client's ``Call`` or None when
    the probe sent nothing (``not_applicable``).
    """

    kind: str
    sample: int
    language: str
    prompt_id: str
    judgement: Judgement
    call: Call | None = None
    reply: Reply | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _quoted(text: str | None, limit: int = REASON_MESSAGE_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def transport_judgement(call: Call) -> Judgement | None:
    """Map a call that produced no usable reply to a verdict, or None when it completed.

    Transport errors (connect, timeout, 429, 5xx, error chunk, reset, oversize body) are
    never quality failures; their reason and evidence carry the HTTP status, the
    provider's error message and a short body excerpt (``Call.body_excerpt``).
    An HTTP 200 whose body or SSE frame never parsed (``invalid_body`` after a 2xx) is
    a completed exchange that produced malformed output: a ``malformed_body`` failure of
    the probe, with the excerpt as evidence, which the probes confirm by the majority of
    three samples (``confirm_malformed``). A reply served by a provider other than the
    pin is no evidence about the pinned endpoint: ``inconclusive``. A 403 moderation
    error is the host refusing content: a ``moderation`` judgement that the refusal
    probe turns into a failure.
    """
    excerpt = call.body_excerpt
    if call.outcome == "transport_error":  # vocabulary: the client's call outcome, not a verdict
        if call.transport_kind == "moderation":
            return Judgement(
                Verdict.FAIL,
                "moderation",
                f"the host refused the request with HTTP {call.http_status} (moderation)",
                {"http_status": call.http_status, "message": call.error_message, "body_excerpt": excerpt},
            )
        if call.transport_kind == "invalid_body" and call.http_status is not None and 200 <= call.http_status < 300:
            return Judgement(
                Verdict.FAIL,
                MALFORMED_BODY,
                f"HTTP {call.http_status}, but the body never parsed ({_quoted(call.error_message)})"
                + (f": {excerpt!r}" if excerpt else ""),
                {"http_status": call.http_status, "message": call.error_message, "body_excerpt": excerpt},
            )
        detail = [call.transport_kind or "unknown"]
        if call.http_status:
            detail.append(f"HTTP {call.http_status}")
        if call.error_message:
            detail.append(_quoted(call.error_message))
        reason = f"transport error ({', '.join(detail)})"
        if excerpt:
            reason += f"; body: {excerpt!r}"
        return Judgement(
            Verdict.TRANSPORT_ERROR,
            f"transport:{call.transport_kind}",
            reason + ": no evidence about quality",
            {
                "transport_kind": call.transport_kind,
                "http_status": call.http_status,
                "message": call.error_message,
                "body_excerpt": excerpt,
                "retry_after_s": call.retry_after_s,
            },
        )
    if call.provider_mismatch:
        return Judgement(
            Verdict.INCONCLUSIVE,
            "provider_mismatch",
            f"served by {call.serving_provider!r}, not the pinned endpoint: no evidence about it",
            {"serving_provider": call.serving_provider},
        )
    return None


def _call(client: ChatClient, model_id: str, ep: EndpointFacts, prompt: Prompt, s: ProbeSettings, *, stream: bool, structured: bool = False) -> Call:
    return client.chat_pinned(
        model_id,
        ep.tag,
        prompt.messages,
        expected_provider=ep.provider_name,
        max_tokens=s.max_tokens,
        temperature=s.temperature,
        stream=stream,
        response_format=response_format() if structured else None,
        require_parameters=structured,
        ttft_limit_s=s.ttft_limit_s,
        total_timeout_s=s.total_timeout_s,
    )


def _judged(kind: str, sample: int, language: str, prompt: Prompt, call: Call, judge: Callable[[Reply], Judgement], *, moderation_counts: bool = False) -> ProbeOutcome:
    early = transport_judgement(call)
    if early is not None:
        if early.check == "moderation" and not moderation_counts:
            early = Judgement(Verdict.INCONCLUSIVE, "moderation", early.reason, early.evidence)
        return ProbeOutcome(kind, sample, language, prompt.prompt_id, early, call=call)
    if kind != TTFT and call.first_token_timeout:
        # Latency is the TTFT probe's contract; a reply that never started is no
        # evidence for this probe's own contract.
        slow = Judgement(
            Verdict.INCONCLUSIVE,
            "first_token_timeout",
            "no content within the TTFT limit: judged by the ttft probe, not this one",
            {},
        )
        return ProbeOutcome(kind, sample, language, prompt.prompt_id, slow, call=call, reply=reply_of(call))
    reply = reply_of(call)
    if reply is None:  # a completed call always carries its reply (``Call``'s contract)
        raise ValueError("a completed call without a reply")
    outcome = ProbeOutcome(kind, sample, language, prompt.prompt_id, judge(reply), call=call, reply=reply)
    outcome.extra.update(round_inputs(kind, reply))
    return outcome


def reply_of(call: Any) -> Reply | None:
    """The judges' ``Reply`` for a call's completed generation (``openrouter.result.
    Completion``, the same fields), or None when the call completed nothing."""
    done = call.reply
    if done is None:
        return None
    return Reply(
        content=done.content, finish_reason=done.finish_reason, reasoning=done.reasoning, refusal=done.refusal,
        completion_tokens=done.completion_tokens, max_tokens=done.max_tokens, ttft_ms=done.ttft_ms,
        total_ms=done.total_ms, stream_opened=done.stream_opened,
    )


def round_inputs(kind: str, reply: Reply) -> dict[str, Any]:
    """What the round-level checks need from one reply, computed while the full text is
    at hand (only an excerpt is stored): its leading-garbage signature (every reply with
    text) and its hard-corruption judgement (free-text replies only)."""
    text = reply.content or ""
    if not text.strip():
        return {}
    inputs: dict[str, Any] = {"leading_signature": judges.leading_signature(text)}
    if kind in (TTFT, REFUSAL, LANGUAGE):
        inputs["corruption"] = judges.judge_corruption(reply)
    return inputs


def confirm_malformed(first: ProbeOutcome, again: Callable[[int], ProbeOutcome]) -> list[ProbeOutcome]:
    """``[first]``, or, when ``first`` is a ``malformed_body`` failure, ``first`` and
    ``CONFIRMATION_SAMPLES`` more samples (``again(sample)`` sends the same request),
    with ``first.judgement`` replaced by the majority of the three (``majority``: 2 of 3
    malformed fail; transport errors count for neither side), as other anomalies are
    confirmed. The raw judgement of the first sample is kept in ``extra``."""
    if first.judgement.verdict != Verdict.FAIL or first.judgement.check != MALFORMED_BODY:
        return [first]
    outcomes = [first] + [again(sample) for sample in range(1, CONFIRMATION_SAMPLES + 1)]
    # Not flagged as an ``anomaly``: that flag makes a language anomaly repeat its language
    # next round, which a malformed body has nothing to do with.
    first.extra["raw_judgement"] = first.judgement
    first.judgement = majority([o.judgement for o in outcomes])
    return outcomes


def _sampled(kind: str, language: str, prompt: Prompt, send: Callable[[], Any], judge: Callable[[Reply], Judgement], *, moderation_counts: bool = False) -> list[ProbeOutcome]:
    """One judged request, confirmed by more samples when its body was malformed."""

    def sample(n: int) -> ProbeOutcome:
        return _judged(kind, n, language, prompt, send(), judge, moderation_counts=moderation_counts)

    return confirm_malformed(sample(0), sample)


def probe_ttft(client: ChatClient, model_id: str, ep: EndpointFacts, language: str, s: ProbeSettings) -> list[ProbeOutcome]:
    """Time to first token on a streamed everyday turn (fail past ``ttft_limit_s``)."""
    prompt = scene_prompt(language, variant=1)
    limit_ms = s.ttft_limit_s * 1000.0
    return _sampled(TTFT, language, prompt, lambda: _call(client, model_id, ep, prompt, s, stream=True),
                    lambda r: judges.judge_ttft(r, limit_ms))


def probe_refusal(client: ChatClient, model_id: str, ep: EndpointFacts, language: str, s: ProbeSettings) -> list[ProbeOutcome]:
    """Filters and silent refusals on a fixed accepted roleplay continuation."""
    prompt = refusal_prompt(language)
    return _sampled(REFUSAL, language, prompt, lambda: _call(client, model_id, ep, prompt, s, stream=True),
                    lambda r: judges.judge_refusal(r, language), moderation_counts=True)


def probe_structured(client: ChatClient, model_id: str, ep: EndpointFacts, language: str, s: ProbeSettings) -> list[ProbeOutcome]:
    """Structured output against ``STATE_SCHEMA`` (json_schema strict, require_parameters).

    An endpoint that does not advertise ``structured_outputs`` is ``not_applicable`` and
    is not called at all (no cost, no false failure).
    """
    prompt = structured_prompt(language)
    if not ep.supports_structured_outputs:
        return [
            ProbeOutcome(
                STRUCTURED,
                0,
                language,
                prompt.prompt_id,
                Judgement(
                    Verdict.NOT_APPLICABLE,
                    "structured_output",
                    "the endpoint does not advertise structured_outputs",
                    {},
                ),
            )
        ]
    # Streamed like the other probes, so one TTFT limit bounds every probe: a silent host
    # costs the round that limit, not the whole-call timeout.
    return _sampled(STRUCTURED, language, prompt, lambda: _call(client, model_id, ep, prompt, s, stream=True, structured=True),
                    lambda r: judges.judge_structured(r, STATE_SCHEMA))


def majority(judgements: Sequence[Judgement]) -> Judgement:
    """Decide a language verdict from the probe and its confirmation samples.

    ``fail`` when most samples fail (2 of 3); ``pass`` when most pass; otherwise
    ``inconclusive``. The deciding judgement keeps the first failing sample's check and
    evidence, with the per-sample verdicts added.
    """
    counts: dict[Verdict, int] = {}
    for j in judgements:
        counts[j.verdict] = counts.get(j.verdict, 0) + 1
    n = len(judgements)
    samples = [j.verdict.value for j in judgements]
    for verdict in (Verdict.FAIL, Verdict.PASS):
        if counts.get(verdict, 0) * 2 > n:
            base = next(j for j in judgements if j.verdict == verdict)
            return Judgement(
                verdict,
                base.check,
                base.reason + (f" (confirmed in {counts[verdict]} of {n} samples)" if n > 1 else ""),
                {**base.evidence, "samples": samples},
            )
    first_anomaly = next((j for j in judgements if j.verdict == Verdict.FAIL), judgements[0])
    return Judgement(
        Verdict.INCONCLUSIVE,
        first_anomaly.check,
        f"samples disagree ({', '.join(samples)}): not confirmed",
        {**first_anomaly.evidence, "samples": samples},
    )


def probe_language(client: ChatClient, model_id: str, ep: EndpointFacts, language: str, s: ProbeSettings) -> list[ProbeOutcome]:
    """Language integrity; an anomaly is confirmed by two more samples (majority of three)."""
    prompt = scene_prompt(language, variant=0)

    def judge(r: Reply) -> Judgement:
        return judges.judge_language(r, language)

    first = _judged(LANGUAGE, 0, language, prompt, _call(client, model_id, ep, prompt, s, stream=True), judge)
    outcomes = [first]
    if first.reply is not None and judges.is_language_anomaly(first.judgement):
        for sample in range(1, CONFIRMATION_SAMPLES + 1):
            call = _call(client, model_id, ep, prompt, s, stream=True)
            outcomes.append(_judged(LANGUAGE, sample, language, prompt, call, judge))
        conclusive = [o.judgement for o in outcomes if o.judgement.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE)]
        decided = majority(conclusive)
        first.extra["raw_judgement"] = first.judgement
        first.extra["anomaly"] = True
        first.judgement = decided
        return outcomes
    return confirm_malformed(first, lambda n: _judged(LANGUAGE, n, language, prompt, _call(client, model_id, ep, prompt, s, stream=True), judge))


PROBES: dict[str, Callable[[ChatClient, str, EndpointFacts, str, ProbeSettings], list[ProbeOutcome]]] = {
    TTFT: probe_ttft,
    REFUSAL: probe_refusal,
    STRUCTURED: probe_structured,
    LANGUAGE: probe_language,
}


def probe_run(kind: str, client: ChatClient, model_id: str, ep: EndpointFacts, language: str, s: ProbeSettings) -> list[ProbeOutcome]:
    """Run one probe kind against one pinned endpoint; never raises for upstream faults.

    An unexpected exception (a bug, not an upstream fault) becomes a ``transport_error``
    verdict with check ``probe_crash`` so one broken probe cannot lose the round; it is
    logged with its traceback.
    """
    try:
        return PROBES[kind](client, model_id, ep, language, s)
    except Exception as exc:  # noqa: BLE001 - the round must survive a probe bug; logged below
        log.exception("probe %s on %s crashed", kind, ep.tag)
        return [
            ProbeOutcome(
                kind,
                0,
                language,
                "",
                Judgement(Verdict.TRANSPORT_ERROR, "probe_crash", f"probe crashed: {exc!r}", {}),
            )
        ]
