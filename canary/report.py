"""Plain-text rendering of a round report for terminals (``canary_round``, ``make demo``).

Written for an 80 to 100 column terminal: the table fits 80 columns for the fleets we
ship (each column as wide as its widest cell, the actions and their dates below it), and
every sentence is wrapped at word boundaries (``core.terminal``), never cut.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from canary.formatting import percent
from canary.probes import ALL_KINDS
from canary.terms import Action, Mode
from canary.verdicts import Verdict
from core.languages import LANGUAGE_NAMES
from core.terminal import MAX_WIDTH, fill

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
# Evidence lines: the endpoint's tag in a column of this width, the details indented under it.
_TAG = 16
_UNDER = " " * (2 + _TAG + 3)


def _cell(probe: dict[str, Any]) -> str:
    """A table cell: the verdict's mark, ``ctrl-FAIL``/``ctrl-pass`` for a positive
    control's own probe (its failure is the expected one)."""
    mark = MARK.get(probe["verdict"], "?")
    return f"{CONTROL_MARK}-{mark}" if probe.get("control") else mark


def language_label(code: str) -> str:
    """``"pt (Portuguese)"``; the bare code for one not among the interface languages."""
    name = LANGUAGE_NAMES.get(code or "")
    return f"{code} ({name})" if name else (code or "?")


def _failure_lines(tag: str, probe: dict[str, Any], width: int) -> list[str]:
    """The evidence lines of one failed probe: check and reason (a positive control's
    labelled), the fleet's rate, the check's rule, then the failing reply itself with the
    prompt's language, centred on its first bad character (``⟦ ⟧``); each wrapped."""
    control = "positive control, expected: " if probe.get("control") else ""
    rate = f"(fleet rate {percent(probe.get('fleet_rate'))})"
    out = fill(f"{probe['kind']}: {control}[{probe['check']}] {probe['reason']} {rate}", width,
               first=f"  {tag:<{_TAG}} ", rest=_UNDER, keep=[rate])
    shown = probe.get("shown") or {}
    if shown.get("rule"):
        out += fill(f"rule: {shown['rule']}", width, first=_UNDER, rest=_UNDER + "  ")
    excerpt = shown.get("excerpt")
    if excerpt:
        sample = f" sample {shown['sample']}" if shown.get("sample") else ""
        out += fill(f"reply ({shown['from_kind']} probe{sample}, prompt in {shown['language'] or '?'}): {excerpt['plain']}",
                    width, first=_UNDER, rest=_UNDER + "  ")
    return out


def _table(report: dict[str, Any]) -> list[str]:
    """The table: tag, each probe's verdict (the TTFT probe's with its time to first
    token in ms), outcome, fail streak; each column as wide as its widest cell, so the
    default fleet's fits 80 columns (the actions are listed under it)."""
    header = ["tag", *(SHORT[k] for k in ALL_KINDS), "outcome", "streak"]
    header[1] = "ttft (ms)"
    rows = []
    for ep in report["endpoints"]:
        verdicts = {p["kind"]: p for p in ep["probes"]}
        cells = [_cell(verdicts[k]) if k in verdicts else "-" for k in ALL_KINDS]
        ttft = verdicts.get("ttft", {}).get("ttft_ms")
        if isinstance(ttft, int | float):
            cells[0] += f" {ttft:.0f}"
        rows.append([ep["tag"], *cells, ep["outcome"] or "-", str(ep["streak"])])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        # The streak is a number: right-aligned.
        return " ".join([*(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=False)), cells[-1].rjust(widths[-1])])

    out = [line(header)]
    out.append("-" * len(out[0]))
    return out + [line(row) for row in rows]


def _action_lines(report: dict[str, Any], width: int) -> list[str]:
    """The policy's actions of the round (``none`` left out), one line per action and
    end date with the endpoints it applied to; in observe mode a suspension is a shadow:
    recorded, invisible to routing."""
    label = "shadow until" if report.get("mode") == Mode.OBSERVE else "until"
    by_action: dict[str, list[str]] = defaultdict(list)
    for ep in report["endpoints"]:
        if ep["action"] == Action.NONE:
            continue
        until = (ep.get("suspended_until") or "")[:16].replace("T", " ")
        by_action[ep["action"] + (f" ({label} {until} UTC)" if until else "")].append(ep["tag"])
    out: list[str] = []
    for action, tags in by_action.items():
        out += fill(f"Action {action}: {', '.join(tags)}", width, rest="  ")
    return out


def _language_lines(report: dict[str, Any], width: int) -> list[str]:
    """Which endpoints were prompted in another language than the round's and why: an
    endpoint whose last round's language probe showed an anomaly
    (``canary.judges.is_language_anomaly``) repeats that round's language
    (``canary.services.rounds.round_open``)."""
    others: dict[str, list[str]] = defaultdict(list)
    for ep in report["endpoints"]:
        if ep.get("language") and ep["language"] != report["language"]:
            others[ep["language"]].append(ep["tag"])
    if not others:
        return []
    which = "; ".join(f"{', '.join(tags)} in {language_label(code)}" for code, tags in sorted(others.items()))
    return fill(f"Prompted in another language than the round's {report['language']}: {which}. An endpoint "
                "whose language probe showed an anomaly in its last round (a language check failed: wrong language "
                "or script, mixing, mojibake; or a foreign language came out on top) gets all its probes in that "
                "round's language again, so the rotation cannot hide the fault.", width)


def render_round_table(report: dict[str, Any], width: int = MAX_WIDTH) -> str:
    """The round as text for a terminal ``width`` columns wide: a header (the round's
    prompt language among it), a table per endpoint (tag, each probe's verdict, TTFT in
    ms, outcome, fail streak; a positive control's own probe marked ``ctrl-``), the
    policy's actions with their end dates, the endpoints prompted in another language,
    then the evidence: per failed or frozen endpoint what failed on how many replies, and
    per failure the check, the fleet's rate, the rule in words and the failing reply's
    excerpt. Sentences are wrapped at word boundaries, never cut."""
    lines = fill(
        f"Round {report['round']} · {report['model']} · prompts in {language_label(report['language'])} · mode {report['mode']}"
        f" · {report['status']} · cost ${report['cost_usd']} ({report['prompt_tokens']}+{report['completion_tokens']} tokens)",
        width, rest="  ")
    lines += _table(report)
    evidence: list[str] = []
    for ep in report["endpoints"]:
        if ep.get("summary"):
            evidence += fill(f"{ep['outcome']}: {ep['summary']}", width, first=f"  {ep['tag']:<{_TAG}} ", rest=_UNDER)
        for p in ep["probes"]:
            if p["verdict"] == "fail":
                evidence.extend(_failure_lines(ep["tag"], p, width))
    if any(p.get("control") for ep in report["endpoints"] for p in ep["probes"]):
        lines += fill(f"{CONTROL_MARK} = positive control: a host known to fail that probe; its failure is expected and "
                      "not counted, a pass makes the probe weak this round", width, rest="  ")
    lines += _action_lines(report, width)
    lines += _language_lines(report, width)
    if report.get("weak_probes"):
        lines.append("")
        lines.append("Weak probes this round (passes count as inconclusive):")
        for kind, why in report["weak_probes"].items():
            lines += fill(f"{kind}: {why}", width, first="  ", rest="    ")
    if evidence:
        lines.append("")
        lines.append("Evidence behind each failure:")
        lines.extend(evidence)
    return "\n".join(lines) + "\n"
