"""Plain-text rendering of a round report for terminals (``canary_round``, ``make demo``)."""

from __future__ import annotations

from typing import Any

from canary.formatting import percent
from canary.probes import ALL_KINDS
from canary.terms import Mode
from canary.verdicts import Verdict

SHORT = {
    "ttft": "ttft",
    "refusal": "refusal",
    "structured_output": "struct",
    "language": "lang",
    "leading_garbage": "leading",
    "corruption": "corrupt",
}
MARK = {Verdict.PASS: "pass", Verdict.FAIL: "FAIL", Verdict.INCONCLUSIVE: "incon", Verdict.TRANSPORT_ERROR: "transp", Verdict.NOT_APPLICABLE: "n/a"}


def render_round_table(report: dict[str, Any]) -> str:
    """A table per endpoint (provider, tag, each probe's verdict, TTFT in ms, outcome,
    policy action), then the evidence behind every failure: the check, the fleet's rate
    for the same check, and the reply excerpt."""
    lines = [
        f"Round {report['round']} · {report['model']} · language {report['language']} · mode {report['mode']}"
        f" · {report['status']} · cost ${report['cost_usd']} ({report['prompt_tokens']}+{report['completion_tokens']} tokens)",
    ]
    header = f"{'provider':<10} {'tag':<16}" + "".join(f" {SHORT[k]:<8}" for k in ALL_KINDS) + f" {'ttft_ms':>8}  {'outcome':<12} {'streak':>6}  action"
    lines.append(header)
    lines.append("-" * len(header))
    evidence: list[str] = []
    for ep in report["endpoints"]:
        verdicts = {p["kind"]: p for p in ep["probes"]}
        cells = "".join(f" {MARK.get(verdicts[k]['verdict'], '?') if k in verdicts else '-':<8}" for k in ALL_KINDS)
        ttft = verdicts.get("ttft", {}).get("ttft_ms")
        ttft_s = f"{ttft:>8.0f}" if isinstance(ttft, int | float) else f"{'-':>8}"
        until = (ep.get("suspended_until") or "")[:16].replace("T", " ")
        # In observe mode a suspension is a shadow: recorded, invisible to routing.
        label = "shadow until" if report.get("mode") == Mode.OBSERVE else "until"
        action = ep["action"] + (f" ({label} {until} UTC)" if until else "")
        lines.append(f"{ep['provider']:<10} {ep['tag']:<16}{cells} {ttft_s}  {ep['outcome'] or '-':<12} {ep['streak']:>6}  {action}")
        for p in ep["probes"]:
            if p["verdict"] == "fail":
                rate = p.get("fleet_rate")
                rate_s = f"fleet rate {percent(rate)}"
                excerpt = (p.get("reply_excerpt") or "").replace("\n", " ")[:120]
                evidence.append(f"  {ep['tag']:<16} {p['kind']}: [{p['check']}] {p['reason']} ({rate_s})")
                if excerpt:
                    evidence.append(f"  {'':<16}   reply: {excerpt!r}")
    if report.get("weak_probes"):
        lines.append("")
        lines.append("Weak probes this round (passes count as inconclusive):")
        for kind, why in report["weak_probes"].items():
            lines.append(f"  {kind}: {why}")
    if evidence:
        lines.append("")
        lines.append("Evidence behind each failure:")
        lines.extend(evidence)
    return "\n".join(lines) + "\n"
