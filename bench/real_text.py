"""The judges on real third-party text: one table per judge and language, worst examples.

Usage: ``.venv/bin/python bench/real_text.py [--judge NAME ...] [--examples N]``, or
``.venv/bin/python bench/real_text.py --prefix [--split all|tuned|held_out]`` for the
gateway's live checks (``routing.live_checks``): each check's false-block rate on the
clean texts as a stream's held prefix (32, 64, 128 characters) and as a whole reply, per
language and per source, its catch rate on the real defects, before (the prefix judge
that blocked on every check) and now (``tests.real_text_prefix``).

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
from routing.live_checks import PREFIX_CANDIDATES, REPLY_CHECKS, LiveCheck  # noqa: E402
from tests.real_text import JUDGES, Judged, Tally, cases, judge_all, refusal_fold, tally  # noqa: E402
from tests.real_text_prefix import PREFIX_LENGTHS, WHOLE, Table, Text, measure, texts, within_limits  # noqa: E402


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


# Before: the prefix judge of the first streaming gateway (canary.judges.prefix, removed), where
# every check blocked, the refusal judge included, and no mojibake check ran.
BEFORE_CHECKS: tuple[LiveCheck, ...] = tuple(
    LiveCheck(c.name, c.decides_at_chars, True, c.judge) for c in PREFIX_CANDIDATES if c.name != "mojibake")


def _prefix_report(title: str, table: Table, checks: tuple[LiveCheck, ...], lengths: tuple[int, ...],
                   detail: bool, examples: int) -> None:
    print(f"\n== {title}")
    heads = " ".join(f"{'@' + str(n) if n else 'whole':>14}" for n in lengths)
    print(f"  {'check':<16} {'blocks':<6} {'group':<24} {'clean':>6} {heads}   caught (of defects) {lengths[-1] or 'whole'}")
    names = [*(c.name for c in checks if c.name in table), "ANY (blocking)"]
    blocking = {c.name: c.blocks for c in checks}
    for name in names:
        by_length = table[name]
        keys = sorted(by_length[lengths[0]], key=lambda k: (k != "ALL", k))
        for key in keys:
            if not detail and key != "ALL" and not any(by_length[n][key].blocked for n in lengths):
                continue
            counts = [by_length[n][key] for n in lengths]
            cells = " ".join(f"{c.blocked:>4} {c.rate:>8.2%}" for c in counts)
            last = counts[-1]
            caught = f"{last.caught}/{last.defects}" if last.defects else "-"
            flag = "yes" if blocking.get(name, True) else "no"
            print(f"  {name:<16} {flag:<6} {key:<24} {counts[0].clean:>6} {cells}   {caught}")
        if examples and name != "ANY (blocking)":
            shown = by_length[lengths[-1]]["ALL"].examples[:examples]
            for line in shown:
                print(f"      false block: {line}")
    for check in checks:
        if check.blocks:
            for problem in within_limits(table, check.name):
                print(f"  OVER THE LIMIT (blocks, must not): {problem}")


def prefix_main(split: str, examples: int, strict: bool) -> None:
    chosen: list[Text] = [t for t in texts(strict=strict) if split == "all" or t.held_out == (split == "held_out")]
    clean = sum(t.role == "clean" for t in chosen)
    print(f"Real texts ({split}, {'strict labels' if strict else 'labels read for their own defect'}): {clean} clean, "
          f"{len(chosen) - clean} defects; expected language = the text's own")
    for title, checks, lengths in (
        ("BEFORE: prefix checks, all blocking (first streaming gateway)", BEFORE_CHECKS, PREFIX_LENGTHS),
        ("NOW: prefix checks (routing.live_checks.PREFIX_CANDIDATES)", PREFIX_CANDIDATES, PREFIX_LENGTHS),
        ("NOW: whole-reply checks (routing.live_checks.REPLY_CHECKS)", REPLY_CHECKS, (WHOLE,)),
    ):
        _prefix_report(f"{title}, {split}", measure(checks, chosen, lengths), checks, lengths, detail=False,
                       examples=examples)
    _prefix_report(f"NOW: whole-reply checks with no expected language (mixing only), {split}",
                   measure(REPLY_CHECKS, chosen, (WHOLE,), no_language=True), REPLY_CHECKS, (WHOLE,), detail=False,
                   examples=examples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", action="append", choices=JUDGES, help="only these judges")
    parser.add_argument("--examples", type=int, default=8, help="worst examples per judge")
    parser.add_argument("--prefix", action="store_true", help="the gateway's live checks (prefix and whole reply)")
    parser.add_argument("--split", choices=("all", "tuned", "held_out"), default="all",
                        help="with --prefix: which texts (held out: source models the rules were not written on)")
    parser.add_argument("--strict", action="store_true",
                        help="with --prefix: every labelled-clean text clean for every check (tests.real_text_prefix)")
    args = parser.parse_args()
    if args.prefix:
        started = time.perf_counter()
        warm_up()
        prefix_main(args.split, min(args.examples, 3), args.strict)
        print(f"\n{time.perf_counter() - started:.0f} s")
        return
    selected = args.judge or list(JUDGES)
    started = time.perf_counter()
    warm_up()
    judged = judge_all([c for c in cases() if c.judge in selected])
    for judge in selected:
        report(judged, judge, args.examples)
    print(f"\n{len(judged)} judgements in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
