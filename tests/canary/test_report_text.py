"""The round as a terminal reads it: no line wider than the terminal, no sentence or reply
cut mid-word, and the header's language explained when some endpoints were prompted in
another (pure: a report dict as ``canary.selectors.round_report`` returns it)."""

from __future__ import annotations

import pytest

from canary.report import render_round_table

REASON = "The reply is in Spanish (1.00), not English. (confirmed in 3 of 3 samples)"
EXCERPT = ("*She sets two steaming mugs on the table and slides one toward you.* Un viento frío barrió la plaza y "
           "dispersó las últimas hojas del otoño. El posadero contó las monedas despacio.")


def probe(kind: str, verdict: str = "pass", **extra) -> dict:
    return {"kind": kind, "verdict": verdict, "check": "", "reason": "", "ttft_ms": 80.0, "fleet_rate": None,
            "language": "", "reply_excerpt": "", "control": False, "shown": None, **extra}


def endpoint(tag: str, language: str, probes: list[dict], **extra) -> dict:
    kinds = {p["kind"] for p in probes}
    rest = [probe(k) for k in ("ttft", "refusal", "structured_output", "language", "leading_garbage", "corruption")
            if k not in kinds]
    return {"provider": tag.split("/")[0].title(), "tag": tag, "outcome": "clean", "streak": 0, "action": "none",
            "suspended_until": None, "summary": "", "controls": [], "language": language, "probes": probes + rest, **extra}


def report(mode: str = "enforce") -> dict:
    shown = {"check": "language_shift", "rule": "The reply must be in the language of the prompt.",
             "from_kind": "language", "sample": 0, "language": "ar",
             "excerpt": {"before": EXCERPT, "bad": "", "after": "", "cut_start": False, "cut_end": True, "at": None,
                         "plain": EXCERPT + "…"}}
    failed = probe("language", "fail", check="language_shift", reason=REASON, fleet_rate=0.071, shown=shown)
    return {
        "round": 2, "model": "meta-llama/llama-3.3-70b-instruct", "language": "en", "mode": mode, "status": "completed",
        "cost_usd": "0.00328646", "prompt_tokens": 4839, "completion_tokens": 2790, "weak_probes": {},
        "endpoints": [
            endpoint("atlas/fp8", "en", []),
            endpoint("cinder/fp8", "ar", [failed], outcome="fail", streak=2, action="suspended",
                     suspended_until="2026-12-04T16:07:00+00:00",
                     summary="language (language_shift) on 3 of 3 replies against the model's baseline 5.6% (36 samples)"),
            endpoint("dynamo/bf16", "en", [probe("refusal", "fail", control=True, check="content_filter",
                                                 reason="The provider stopped the reply with finish_reason content_filter.")]),
            endpoint("juniper/fp8", "ar", [], outcome="fail", streak=2, action="suspended",
                     suspended_until="2026-12-04T16:07:00+00:00"),
        ],
    }


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("width", [80, 100])
def test_no_line_is_wider_than_the_terminal_and_nothing_is_cut(width):
    text = render_round_table(report(), width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), max(lines, key=len)
    flat = words(text)
    assert words(REASON) in flat and words(EXCERPT) + "…" in flat and "(fleet rate 7.1%)" in text
    assert "The reply must be in the language of the prompt." in flat
    assert "ctrl-FAIL" in text


def test_the_table_has_a_row_per_endpoint_and_the_actions_are_listed_under_it():
    lines = render_round_table(report()).splitlines()
    assert lines[2].split() == ["tag", "ttft", "(ms)", "refusal", "struct", "lang", "leading", "corrupt", "outcome", "streak"]
    assert lines[5].split() == ["cinder/fp8", "pass", "80", "pass", "pass", "FAIL", "pass", "pass", "fail", "2"]
    assert "Action suspended (until 2026-12-04 16:07 UTC): cinder/fp8, juniper/fp8" in words("\n".join(lines))
    observe = words(render_round_table(report("observe")))
    assert "Action suspended (shadow until 2026-12-04 16:07 UTC): cinder/fp8, juniper/fp8" in observe


def test_endpoints_prompted_in_another_language_than_the_headers_are_named_with_why():
    text = words(render_round_table(report()))
    assert "prompts in en (English)" in text
    assert "Prompted in another language than the round's en: cinder/fp8, juniper/fp8 in ar (Arabic)." in text
    assert "its last round" in text
    # Every endpoint in the round's language: nothing to explain.
    same = report()
    for ep in same["endpoints"]:
        ep["language"] = "en"
    assert "another language" not in render_round_table(same)
