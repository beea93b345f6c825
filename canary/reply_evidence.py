"""The failing reply behind each failed check, read from the stored probe rows.

A probe's failure shows its own reply; a round-level check (leading garbage, corruption)
judges every reply of the endpoint in the round and stores none, so the reply shown is the
one that carries the defect (its leading signature of the failing kind, its failing
corruption judgement), never another probe's clean one. The excerpt is centred on the first
bad character (``canary.evidence``) and says which probe and sample the reply came from and
the language of its prompt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from canary.evidence import Excerpt, check_rule, failing_excerpt, failing_kind_of, leading_culprit
from canary.models import ProbeResult
from canary.probes import CORRUPTION, LEADING_GARBAGE, PROBE_KINDS

REPLY_FIELDS = ("round_id", "endpoint_id", "kind", "sample", "language", "leading_signature", "corruption",
                "reply_excerpt", "evidence", "check_name")


@dataclass(frozen=True)
class FailingReply:
    """What a failed check is shown with: ``check`` and its ``rule`` in words, the reply
    it failed on (``from_kind`` probe, confirmation ``sample``, the prompt's ``language``)
    and an ``excerpt`` centred on the first bad character (None: no reply text stored)."""

    check: str
    rule: str
    from_kind: str
    sample: int
    language: str
    excerpt: Excerpt | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"check", "rule", "from_kind", "sample", "language", "excerpt":
        {"before", "bad", "after", "cut_start", "cut_end", "at", "plain"} | None}``."""
        ex = self.excerpt
        return {
            "check": self.check, "rule": self.rule, "from_kind": self.from_kind, "sample": self.sample,
            "language": self.language,
            "excerpt": None if ex is None else {
                "before": ex.before, "bad": ex.bad, "after": ex.after, "cut_start": ex.cut_start,
                "cut_end": ex.cut_end, "at": ex.at, "plain": ex.plain(),
            },
        }


def _shown(check: str, reply: dict[str, Any] | None, evidence: Any, locate: str = "") -> FailingReply:
    """``locate``: the check (or kind) whose bad character to look for and whose rule to
    quote when ``check`` has none written (default ``check``)."""
    rule = check_rule(check) or check_rule(locate)
    if reply is None:
        return FailingReply(check, rule, "", 0, "", None)
    text = reply["reply_excerpt"] or ""
    excerpt = failing_excerpt(locate or check, text, evidence if isinstance(evidence, dict) else {}) if text else None
    return FailingReply(check, rule, reply["kind"], reply["sample"], reply["language"], excerpt)


def failing_reply(failed: dict[str, Any], replies: list[dict[str, Any]]) -> FailingReply:
    """The reply behind one failed row. ``failed``: the failed row's ``kind``,
    ``check_name``, ``evidence`` (and, for a probe, its own ``REPLY_FIELDS``);
    ``replies``: every probe row (all samples, ``REPLY_FIELDS``) of the same endpoint and
    round, in (kind, sample) order."""
    kind, check = failed["kind"], failed.get("check_name") or failed["kind"]
    if kind == LEADING_GARBAGE:
        signatures = {i: r["leading_signature"] for i, r in enumerate(replies)}
        culprit = leading_culprit(signatures, failing_kind_of(failed.get("evidence") or {}))
        return _shown(check, None if culprit is None else replies[culprit], {}, locate=LEADING_GARBAGE)
    if kind == CORRUPTION:
        for r in replies:
            judged = r["corruption"]
            if isinstance(judged, dict) and judged.get("verdict") == "fail" and judged.get("check") == check:
                return _shown(check, r, judged.get("evidence"))
        return _shown(check, None, {})
    own = next((r for r in replies if r["kind"] == kind and r["sample"] == failed.get("sample", 0)), None)
    return _shown(check, own, failed.get("evidence"), locate="" if check_rule(check) else kind)


def failing_replies(failed_rows: Iterable[dict[str, Any]]) -> dict[tuple[int, int, str], FailingReply]:
    """``failing_reply`` of every failed row (dicts with ``round_id``, ``endpoint_id``,
    ``kind``, ``check_name``, ``evidence``), keyed by (round id, endpoint id, kind). One
    query for the replies of all the rows' (round, endpoint) pairs."""
    rows = list(failed_rows)
    if not rows:
        return {}
    pairs = {(r["round_id"], r["endpoint_id"]) for r in rows}
    replies: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for reply in (
        ProbeResult.objects.filter(round_id__in={p[0] for p in pairs}, endpoint_id__in={p[1] for p in pairs}, kind__in=PROBE_KINDS)
        .order_by("round_id", "endpoint_id", "kind", "sample")
        .values(*REPLY_FIELDS)
    ):
        key = (reply["round_id"], reply["endpoint_id"])
        if key in pairs:
            replies[key].append(reply)
    return {
        (r["round_id"], r["endpoint_id"], r["kind"]): failing_reply(r, replies[(r["round_id"], r["endpoint_id"])])
        for r in rows
    }
