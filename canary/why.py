"""Reasons that name the defect: which check or status, on how many of how many replies,
against what baseline (pure: no Django).

An endpoint's round evidence (``EndpointRound.evidence``) gains ``replies``: per failed
check the count of the endpoint's replies in the round that showed it, and per transport
status the count of probes that ended in it. ``round_summary`` turns that into the clause
every decision, notification, page and command leads with, e.g. ``"structured_output on 1
of 1 reply, leading_garbage on 3 of 4 replies"`` or, for a frozen round, ``"http_429 on
4 of 4 probes"``.

Baselines: the round judgement stores, per failed check, the model's baseline it was held
against (``evidence["baselines"]``, docs/baselines.md); ``round_summary`` names it
("against the model's baseline 2% (1,200 samples, p = 0.0004)"), and a round stored
without one names none rather than inventing one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from canary.formatting import percent

LEADING = "leading_garbage"
CORRUPTION = "corruption"


def _plural(n: int, word: str, words: str) -> str:
    return f"{n} {word if n == 1 else words}"


def reply_counts(kind: str, check: str, replies: Iterable[Mapping[str, Any]], junk_kind: str = "") -> tuple[int, int]:
    """``(k, n)``: of the ``n`` replies that a failed ``kind``/``check`` judged, ``k``
    showed the failure. ``replies`` are the endpoint's probe rows in the round (every
    sample), each with ``kind``, ``raw_verdict``, ``check_name``, ``leading_signature``,
    ``corruption`` (the judgement as data) and ``transport_kind``.

    Leading garbage counts replies with text whose signature is of ``junk_kind`` (any
    junk when blank); corruption, the free-text replies whose corruption judgement failed
    with ``check``; a probe, its own samples that failed (raw verdict).
    """
    rows = list(replies)
    if kind == LEADING:
        judged = [r for r in rows if r.get("leading_signature") is not None]
        bad = [r for r in judged if r["leading_signature"] and (not junk_kind or r["leading_signature"].split(":", 1)[0] == junk_kind)]
        return len(bad), len(judged)
    if kind == CORRUPTION:
        judged = [r for r in rows if isinstance(r.get("corruption"), dict)]
        bad = [r for r in judged if r["corruption"].get("verdict") == "fail" and r["corruption"].get("check") == check]
        return len(bad), len(judged)
    own = [r for r in rows if r.get("kind") == kind and not r.get("transport_kind")]
    return sum(1 for r in own if r.get("raw_verdict") == "fail"), len(own)


def transport_counts(replies: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Per transport status (``http_429``, ``timeout``...), how many of the replies (probe
    rows, sample 0) ended in it."""
    return dict(Counter(str(r["transport_kind"]) for r in replies if r.get("transport_kind")))


def baseline_texts(evidence: Mapping[str, Any]) -> dict[str, str]:
    """Per kind, the baseline a failure was held against, in words, from the round
    evidence's ``baselines`` (``canary.round_judgement``'s per-check decisions, #32;
    docs/baselines.md): ``"the model's baseline 2% (1,200 samples, p = 0.0004)"``, or
    ``"no established baseline yet: 40 samples"``. ``{}`` when the round stored none."""
    found = evidence.get("baselines")
    if not isinstance(found, Mapping):
        return {}
    out = {}
    for kind, d in found.items():
        if not isinstance(d, Mapping) or d.get("baseline_rate") is None:
            continue
        trials = int(d.get("baseline_trials") or 0)
        if not d.get("established"):
            out[str(kind)] = f"no established baseline yet: {trials:,} samples"
            continue
        p_value = d.get("p_value")
        p_text = f", p = {float(p_value):.2g}" if isinstance(p_value, int | float) and not isinstance(p_value, bool) else ""
        out[str(kind)] = f"the model's baseline {percent(d['baseline_rate'])} ({trials:,} samples{p_text})"
    return out


def round_summary(evidence: Mapping[str, Any], baselines: Mapping[str, str] | None = None) -> str:
    """One clause naming what an endpoint's round showed, from its round evidence
    (``EndpointRound.evidence``: ``failed`` {kind: {check, ...}}, ``transport_errors``,
    ``controls``, and ``replies`` when stored: ``{"checks": {kind: [k, n]}, "transport":
    {status: k}, "probes": n}``). ``""`` when nothing failed.

    Shapes: ``"structured_output on 1 of 1 reply"``, several joined by ``", "``;
    ``"http_429 on 3 of 4 probes"`` when only transport errors (a frozen round);
    ``" against <baseline>"`` appended to a check with a baseline in ``baselines``.
    """
    baselines = baseline_texts(evidence) if baselines is None else baselines
    failed = evidence.get("failed") or {}
    replies = evidence.get("replies") or {}
    counts = replies.get("checks") or {}
    parts = []
    for kind, info in failed.items():
        check = (info or {}).get("check") or kind
        text = check if check == kind else f"{kind} ({check})"
        pair = counts.get(kind)
        if isinstance(pair, list | tuple) and len(pair) == 2 and pair[1]:
            text += f" on {pair[0]} of {_plural(int(pair[1]), 'reply', 'replies')}"
        baseline = baselines.get(check) or baselines.get(kind)
        if baseline:
            text += f" ({baseline})" if baseline.startswith("no ") else f" against {baseline}"
        parts.append(text)
    if parts:
        note = control_note(evidence)
        return ", ".join(parts) + (f"; {note}" if note else "")
    transport = replies.get("transport") or {}
    probes = replies.get("probes")
    if transport:
        statuses = ", ".join(f"{status} on {k}" + (f" of {_plural(int(probes), 'probe', 'probes')}" if probes else "") for status, k in transport.items())
        return statuses
    kinds = evidence.get("transport_errors") or []
    if kinds:
        return f"transport errors on {', '.join(kinds)}"
    return ""


def control_note(evidence: Mapping[str, Any]) -> str:
    """``"positive control of refusal (expected to fail; not counted)"`` for an endpoint
    that is a positive control, ``""`` otherwise."""
    controls = evidence.get("controls") or []
    return f"positive control of {', '.join(controls)} (expected to fail; not counted)" if controls else ""


def with_summary(summary: str, reason: str) -> str:
    """A decision's reason led by the round's summary: ``"<summary>: <reason>"``."""
    return f"{summary}: {reason}" if summary else reason


def replies_evidence(failed: Mapping[str, Mapping[str, Any]], replies: Iterable[Mapping[str, Any]], junk_kind: str = "") -> dict[str, Any]:
    """The ``replies`` entry of an endpoint's round evidence: ``{"checks": {kind: [k, n]}
    for each failed kind (``reply_counts``), "transport": {status: k} over the sample-0
    probes, "probes": how many sample-0 probes there were}``. ``failed`` is the round
    evidence's ``failed`` ({kind: {"check": ...}}); ``junk_kind`` the leading-garbage kind
    that failed."""
    rows = list(replies)
    firsts = [r for r in rows if r.get("sample", 0) == 0 and r.get("kind") not in (LEADING, CORRUPTION)]
    return {
        "checks": {
            kind: list(reply_counts(kind, str((info or {}).get("check") or kind), rows, junk_kind))
            for kind, info in failed.items()
        },
        "transport": transport_counts(firsts),
        "probes": len(firsts),
    }
