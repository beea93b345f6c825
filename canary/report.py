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


CONTROL_MARK = "ctrl"


def _cell(probe: dict[str, Any]) -> str:
    """A table cell: the verdict's mark, ``ctrl-FAIL``/``ctrl-pass`` for a positive
    control's own probe (its failure is the expected one)."""
    mark = MARK.get(probe["verdict"], "?")
    return f"{CONTROL_MARK}-{mark}" if probe.get("control") else mark


def _failure_lines(tag: str, probe: dict[str, Any]) -> list[str]:
    """The evidence lines of one failed probe: check and reason (a positive control's
    labelled), the fleet's rate, the check's rule, then the failing reply itself with the
    prompt's language, centred on its first bad character (``⟦ ⟧``)."""
    control = "positive control, expected: " if probe.get("control") else ""
    out = [f"  {tag:<16} {probe['kind']}: {control}[{probe['check']}] {probe['reason']} (fleet rate {percent(probe.get('fleet_rate'))})"]
    shown = probe.get("shown") or {}
    if shown.get("rule"):
        out.append(f"  {'':<16}   rule: {shown['rule']}")
    excerpt = shown.get("excerpt")
    if excerpt:
        sample = f" sample {shown['sample']}" if shown.get("sample") else ""
        out.append(f"  {'':<16}   reply ({shown['from_kind']} probe{sample}, prompt in {shown['language'] or '?'}): {excerpt['plain']}")
    return out


def render_round_table(report: dict[str, Any]) -> str:
    """A table per endpoint (provider, tag, each probe's verdict, TTFT in ms, outcome,
    policy action; a positive control's own probe marked ``ctrl-``), then the evidence:
    per failed or frozen endpoint what failed on how many replies, and per failure the
    check, the fleet's rate, the rule in words and the failing reply's excerpt."""
    lines = [
        f"Round {report['round']} · {report['model']} · language {report['language']} · mode {report['mode']}"
        f" · {report['status']} · cost ${report['cost_usd']} ({report['prompt_tokens']}+{report['completion_tokens']} tokens)",
    ]
    header = f"{'provider':<10} {'tag':<16}" + "".join(f" {SHORT[k]:<9}" for k in ALL_KINDS) + f" {'ttft_ms':>8}  {'outcome':<12} {'streak':>6}  action"
    lines.append(header)
    lines.append("-" * len(header))
    evidence: list[str] = []
    for ep in report["endpoints"]:
        verdicts = {p["kind"]: p for p in ep["probes"]}
        cells = "".join(f" {_cell(verdicts[k]) if k in verdicts else '-':<9}" for k in ALL_KINDS)
        ttft = verdicts.get("ttft", {}).get("ttft_ms")
        ttft_s = f"{ttft:>8.0f}" if isinstance(ttft, int | float) else f"{'-':>8}"
        until = (ep.get("suspended_until") or "")[:16].replace("T", " ")
        # In observe mode a suspension is a shadow: recorded, invisible to routing.
        label = "shadow until" if report.get("mode") == Mode.OBSERVE else "until"
        action = ep["action"] + (f" ({label} {until} UTC)" if until else "")
        lines.append(f"{ep['provider']:<10} {ep['tag']:<16}{cells} {ttft_s}  {ep['outcome'] or '-':<12} {ep['streak']:>6}  {action}")
        if ep.get("summary"):
            evidence.append(f"  {ep['tag']:<16} {ep['outcome']}: {ep['summary']}")
        for p in ep["probes"]:
            if p["verdict"] == "fail":
                evidence.extend(_failure_lines(ep["tag"], p))
    if any(p.get("control") for ep in report["endpoints"] for p in ep["probes"]):
        lines.append(f"{CONTROL_MARK} = positive control: a host known to fail that probe; its failure is expected and "
                     "not counted, a pass makes the probe weak this round")
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
