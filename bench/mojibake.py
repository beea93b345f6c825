"""Bench: the mojibake rule (``canary.judges.encoding.check_mojibake``) on the split it was
written against: false blocks on clean real text and catches of mojibake, tuned and held
out, before (ftfy's fixer on the whole text) and now.

Usage: ``.venv/bin/python bench/mojibake.py [--examples N]``.

Split, chosen before the rule was written (``canary/judges/encoding.py`` names it too):

- tuned: ftfy's test files ``synthetic`` and ``negative``; the NTREX passages of ar, en,
  fr, it, ko, pl, ru, uk, zh (every other language in alphabetical order, from the
  first); the XSTest and LLMZoo answers of the models ``tests.real_text_prefix`` tunes on.
- held out: ftfy's ``in-the-wild``, ``language-names`` and ``known-failures``; the NTREX
  passages of de, es, id, ja, nl, pt, tr, vi; the held-out models' answers.

Texts: ``tests/fixtures/real-text`` (sources and licences in its README). Clean: XSTest
compliant answers, LLMZoo answers labelled clean (adjudicated defects left out), NTREX
passages, ftfy's must-not-change strings, each whole and cut at 32, 64 and 128
characters. Defects: ftfy's mojibake cases (whole), and defects *made here* (not real
ones): every NTREX passage with a non-ASCII character encoded as UTF-8 and read as
Windows-1252, Latin-1, Windows-1251, MacRoman and cp437 (whole and at 64 characters).
``prefix only``: texts a prefix fails that the whole text passes (the whole reply must be
caught whenever a prefix is).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ftfy  # noqa: E402 (path set above)
import ftfy.bad_codecs  # noqa: E402, F401 - registers the sloppy-windows-* code pages

from canary.judges import encoding  # noqa: E402
from canary.judges.encoding import check_mojibake  # noqa: E402
from canary.verdicts import Verdict  # noqa: E402
from tests.real_text import adjudications, load  # noqa: E402
from tests.real_text_prefix import HELD_OUT_MODELS  # noqa: E402

TUNED_FTFY_FILES = frozenset({"synthetic", "negative"})
TUNED_LANGUAGES = frozenset({"ar", "en", "fr", "it", "ko", "pl", "ru", "uk", "zh"})
MADE_PAGES = ("sloppy-windows-1252", "latin-1", "sloppy-windows-1251", "macroman", "cp437")
LENGTHS = (32, 64, 128, 0)  # 0: whole


def before(text: str) -> bool:
    """The rule before windows: ftfy's fixer changed the whole text with an encode or
    decode step."""
    explained = ftfy.fix_encoding_and_explain(text)
    return explained.text != text and any(step[0] in ("encode", "decode") for step in explained.explanation or [])


def now(text: str) -> bool:
    return check_mojibake(text).verdict is Verdict.FAIL


def split_texts(held_out: bool) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """``(clean, ftfy_defects, made_defects)`` of one side of the split, each as
    ``(group, text)``."""
    adjudicated = adjudications()
    clean: list[tuple[str, str]] = []
    defects: list[tuple[str, str]] = []
    made: list[tuple[str, str]] = []
    for record in load("ftfy_cases"):
        if (record["ftfy_file"] not in TUNED_FTFY_FILES) == held_out:
            group = f"ftfy {record['ftfy_file']}"
            (clean if record["expected"] == "clean" else defects).append((group, record["text"]))
    for record in load("ntrex_clean"):
        if (record["lang"] not in TUNED_LANGUAGES) == held_out:
            text = record["text"]
            clean.append((f"ntrex {record['lang']}", text))
            if not text.isascii():
                made += [(page, text.encode("utf-8").decode(page)) for page in MADE_PAGES]
    for name, labels in (("xstest_en_refusal", {"non_refusal"}), ("llmzoo_en_zh_answers", {"clean"})):
        for record in load(name):
            if record["expected"] in labels and record["source"] not in adjudicated \
                    and (record["model"] in HELD_OUT_MODELS) == held_out:
                clean.append((f"{name.split('_')[0]} {record['model']}", record["text"]))
    return clean, defects, made


def _cut(text: str, length: int) -> str:
    return text if length == 0 else text[:length]


def report(side: str, rule_name: str, rule: Callable[[str], bool], examples: int) -> None:
    clean, defects, made = split_texts(side == "held_out")
    print(f"\n== {side}, {rule_name}")
    blocked = {n: Counter() for n in LENGTHS}
    shown: list[str] = []
    for group, text in clean:
        for n in LENGTHS:
            if rule(_cut(text, n)):
                blocked[n][group] += 1
                if n == 0 and len(shown) < examples:
                    shown.append(f"[{group}] {text[:80]!r}")
    heads = " ".join(f"{'@' + str(n) if n else 'whole':>7}" for n in LENGTHS)
    print(f"  clean: {len(clean)} texts; false blocks {heads}")
    print(f"  {'ALL':<34} " + " ".join(f"{sum(blocked[n].values()):>7}" for n in LENGTHS))
    for group in sorted({g for n in LENGTHS for g in blocked[n]}):
        print(f"  {group:<34} " + " ".join(f"{blocked[n][group]:>7}" for n in LENGTHS))
    for line in shown:
        print(f"    false block: {line}")
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed: list[str] = []
    for group, text in defects:
        total[group] += 1
        if rule(text):
            caught[group] += 1
        elif len(missed) < examples:
            missed.append(f"[{group}] {text[:80]!r}")
    print("  ftfy's mojibake caught (whole): " + ", ".join(f"{g} {caught[g]}/{total[g]}" for g in sorted(total))
          + f"; all {sum(caught.values())}/{sum(total.values())}")
    for line in missed:
        print(f"    missed: {line}")
    made_whole: Counter[str] = Counter()
    made_64: Counter[str] = Counter()
    made_total: Counter[str] = Counter()
    for page, text in made:
        made_total[page] += 1
        made_whole[page] += rule(text)
        made_64[page] += rule(text[:64])
    print("  made here (UTF-8 of NTREX read as), caught whole / at 64: " + ", ".join(
        f"{p} {made_whole[p]}/{made_64[p]} of {made_total[p]}" for p in MADE_PAGES))
    prefix_only = sum(1 for _, text in [*defects, *made, *clean]
                      if not rule(text) and any(rule(text[:n]) for n in LENGTHS if n))
    print(f"  prefix only (a prefix fails, the whole passes): {prefix_only}")


def cost(rule: Callable[[str], bool]) -> float:
    """Milliseconds per 500 characters over every clean text and made defect, whole."""
    texts = [text for side in (False, True) for part in (split_texts(side)[0], split_texts(side)[2])
             for _, text in part]
    started = time.perf_counter()
    for text in texts:
        rule(text)
    return (time.perf_counter() - started) * 1000 / (sum(map(len, texts)) / 500)


def typography_table() -> None:
    """The rule with and without skipping typographic windows (``encoding.TYPOGRAPHY``):
    every text of both sides, whole and cut, as a whole reply and as an open prefix."""
    skip = encoding._typographic
    texts = [text for side in (False, True) for part in split_texts(side) for _, text in part]
    judged = changed = 0
    for text in texts:
        for length in LENGTHS:
            cut = _cut(text, length)
            for open_end in (False, True):
                encoding._typographic = lambda window: False
                old = check_mojibake(cut, open_end=open_end).verdict
                encoding._typographic = skip
                judged += 1
                if check_mojibake(cut, open_end=open_end).verdict is not old:
                    changed += 1
                    print(f"  changed ({old.value}): {cut[:80]!r}")
    print(f"\nskipping typographic windows: {judged:,} judgements of {len(texts):,} texts, {changed} changed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--typography", action="store_true",
                        help="only compare the rule with and without skipping typographic windows")
    args = parser.parse_args()
    if args.typography:
        typography_table()
        return
    for side in ("tuned", "held_out"):
        for name, rule in (("before (ftfy's fixer, whole text)", before), ("now (check_mojibake)", now)):
            report(side, name, rule, args.examples)
    print(f"\ncost per 500 characters: before {cost(before):.2f} ms, now {cost(now):.2f} ms")


if __name__ == "__main__":
    main()
