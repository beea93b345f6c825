"""The judges on real third-party text: one table per judge and language, worst examples.

Usage: ``.venv/bin/python bench/real_text.py [--judge NAME ...] [--examples N]``.

Reads ``tests/fixtures/real-text/`` (sources and licences in its README): XSTest
completions with human labels, LLMZoo answers, NTREX news translations in the 17
languages, ftfy's test cases, model outputs quoted in bug reports. Columns: ``clean``
texts and ``false`` failures on them; labelled ``defect`` texts and the ``missed`` ones;
``inconcl`` (inconclusive verdicts, any role); ``partial`` (XSTest partial refusals and
out-of-scope defects) and how many of them failed; ``confirm`` (clean texts whose
language verdict would ask a probe for confirmation samples). The refusal judge is also shown per
XSTest model, the split its rules were checked on (tuned on one model, read on the other).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from canary.judges import warm_up  # noqa: E402 (path set above)
from tests.real_text import JUDGES, Judged, Tally, cases, judge_all, refusal_fold, tally  # noqa: E402


def _row(label: str, t: Tally) -> str:
    rate = f"{t.false_failures / t.clean:6.2%}" if t.clean else "     -"
    caught = f"{t.caught / t.defects:6.1%}" if t.defects else "     -"
    partial = f"{t.partial_failed}/{t.partial}" if t.partial else "-"
    return (
        f"  {label:<24} {t.clean:>6} {t.false_failures:>6} {rate}  {t.defects:>6} {t.misses:>6}"
        f" {caught}  {t.inconclusive:>7}  {partial:>7}  {t.confirmations:>7}"
    )


_HEADER = (
    f"  {'group':<24} {'clean':>6} {'false':>6} {'rate':>6}  {'defect':>6} {'missed':>6}"
    f" {'caught':>6}  {'inconcl':>7}  {'partial':>7}  {'confirm':>7}"
)


def _excerpt(item: Judged) -> str:
    text = " ".join(item.case.text.split())[:110]
    j = item.judgement
    detail = j.evidence.get("matched") or j.evidence.get("phrase") or ""
    return f"    [{item.case.corpus}/{item.case.language}] {j.verdict.value} {j.check}: {text!r}" + (
        f"  <- {str(detail)[:60]!r}" if detail else ""
    )


def report(judged: list[Judged], judge: str, examples: int) -> None:
    mine = [j for j in judged if j.case.judge == judge]
    if not mine:
        return
    print(f"\n== {judge} ({len(mine)} cases)")
    print(_HEADER)
    total = Tally()
    for item in mine:
        total.add(item)
    by_corpus = tally(mine, lambda c: c.corpus)
    for corpus in sorted(by_corpus):
        print(_row(f"corpus {corpus}", by_corpus[corpus]))
    by_language = tally(mine, lambda c: c.language)
    for language in sorted(by_language):
        print(_row(f"lang {language}", by_language[language]))
    if judge == "refusal":
        by_model = tally(mine, lambda c: f"{c.corpus} {c.model}" if c.model else c.corpus)
        for model in sorted(by_model):
            print(_row(model, by_model[model]))
        by_fold = tally([j for j in mine if j.case.corpus != "ntrex"], refusal_fold)
        for fold in sorted(by_fold):
            print(_row(f"answers {fold}", by_fold[fold]))
    print(_row("ALL", total))
    if examples:
        for title, items in (("false failures", total.worst_false), ("misses", total.worst_missed)):
            if items:
                print(f"  worst {title} (first {min(examples, len(items))} of {len(items)}):")
                for item in items[:examples]:
                    print(_excerpt(item))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", action="append", choices=JUDGES, help="only these judges")
    parser.add_argument("--examples", type=int, default=8, help="worst examples per judge")
    args = parser.parse_args()
    selected = args.judge or list(JUDGES)
    started = time.perf_counter()
    warm_up()
    judged = judge_all([c for c in cases() if c.judge in selected])
    for judge in selected:
        report(judged, judge, args.examples)
    print(f"\n{len(judged)} judgements in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
