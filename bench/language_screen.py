"""Bench: the language screen (``core.language_detector.screen``) against reading every
sentence with the detector, on real text: where they disagree, whether any verdict
changes, and the CPU per reply.

Usage: ``.venv/bin/python bench/language_screen.py [--pairs N] [--cpu-replies N]``

1. **Sentences**: every sentence of 20+ letters of ``tests/fixtures/real-text`` (the
   split of ``tests.real_text_prefix``: tuned / held out), read by both. A sentence the
   screen settles (its top at ``SCREEN_CONFIDENCE`` or more) is never read again, so the
   screen is safe when no sentence it settles as X reads surely (0.9) as another language
   to the detector: ``unsafe`` must be 0. ``disagree``: the detector's sure top differs
   from the screen's top at any confidence (the highest such screen confidence shown).
2. **Verdicts**: ``language_mixing`` with the screen and without it (every sentence read
   by the detector, the reply's own language read whole first), on every real text with
   its own language and with none, and on mixes made from NTREX's parallel news (one
   record in language A followed by the first sentence of the same record in B, for
   ``--pairs`` ordered pairs of languages, both ways of expecting). Every difference is
   printed.
3. **CPU**: ``language_mixing`` without a language, per reply, thread CPU, with and
   without the screen in alternating blocks of the same replies, a 10 ms sleep before
   each (a server reads a reply after other work, with the CPU's caches cold: in a tight
   loop lingua is about 5 times cheaper than that).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from canary.judges.language import check_language_mixing  # noqa: E402
from canary.judges.text import letter_count, split_sentences, strip_code_and_urls  # noqa: E402
from core import language_detector as detector  # noqa: E402
from tests.real_text import load  # noqa: E402
from tests.real_text_prefix import texts  # noqa: E402

SURE = detector.SURE_CONFIDENCE


@contextlib.contextmanager
def without_screen() -> Iterator[None]:
    """The rule as it was before the screen: no sentence settled, the own language read whole."""
    saved = detector.screen, detector.screened_as
    detector.screen = lambda text: None  # type: ignore[assignment]
    detector.screened_as = lambda reading, language: False  # type: ignore[assignment]
    try:
        yield
    finally:
        detector.screen, detector.screened_as = saved


def sentences_table() -> None:
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for item in texts():
        split = "held out" if item.held_out else "tuned"
        for s in split_sentences(strip_code_and_urls(item.text)):
            if letter_count(s.text) < 20:
                continue
            row = rows[split]
            row["sentences"] += 1
            top = detector.screen(s.text)
            values = detector.confidences(s.text)
            sure = values[0] if values and values[0].value >= SURE else None
            if top is not None and top.value >= detector.SCREEN_CONFIDENCE:
                row["settled"] += 1
            if sure is not None and top is not None and sure.language != top.language:
                row["disagree"] += 1
                row["max_screen"] = max(row["max_screen"], top.value)
                if top.value >= detector.SCREEN_CONFIDENCE:
                    row["unsafe"] += 1
                    print(f"  unsafe: screen {top.language} {top.value:.3f}, detector {sure.language} "
                          f"{sure.value:.3f}: {s.text[:80]!r}")
    print("split     sentences  settled (share)      disagree  max screen conf there  unsafe")
    for split in ("tuned", "held out"):
        r = rows[split]
        print(f"{split:9s} {int(r['sentences']):9,d}  {int(r['settled']):7,d} ({r['settled'] / r['sentences']:.1%})"
              f"  {int(r['disagree']):12d}  {r['max_screen']:21.3f}  {int(r['unsafe']):6d}")


def verdicts(text: str, language: str | None) -> tuple[str, str]:
    new = check_language_mixing(text, language).verdict.value
    with without_screen():
        old = check_language_mixing(text, language).verdict.value
    return old, new


def ntrex_mixes(pairs: int) -> list[tuple[str, str, str]]:
    """(text, language of its body, language of its last sentence) for ``pairs`` ordered
    language pairs, every NTREX line both languages have."""
    by_line: dict[str, dict[str, str]] = defaultdict(dict)
    for record in load("ntrex_clean"):
        by_line[record["source"].rsplit("#", 1)[1]][record["lang"]] = record["text"]
    languages = sorted({lang for line in by_line.values() for lang in line})
    out = []
    for a, b in list(itertools.permutations(languages, 2))[:pairs]:
        for line in by_line.values():
            if a in line and b in line and (first := split_sentences(line[b])):
                out.append((f"{line[a]} {first[0].text.strip()}", a, b))
    return out


def verdicts_table(pairs: int) -> None:
    changed: dict[str, int] = defaultdict(int)
    judged: dict[str, int] = defaultdict(int)
    failed: dict[str, int] = defaultdict(int)
    for item in texts():
        split = "held out" if item.held_out else "tuned"
        for language in {item.language, None}:
            key = f"{split}, {'own language' if language else 'no language'}"
            judged[key] += 1
            old, new = verdicts(item.text, language)
            failed[key] += new == "fail"
            if old != new:
                changed[key] += 1
                print(f"  changed ({key}): {old} -> {new}: {item.source} {item.text[:80]!r}")
    for text, body, last in ntrex_mixes(pairs):
        for language in (body, None):
            key = f"NTREX mixes, {'body language' if language else 'no language'}"
            judged[key] += 1
            old, new = verdicts(text, language)
            failed[key] += new == "fail"
            if old != new:
                changed[key] += 1
                print(f"  changed ({key}, {body}+{last}): {old} -> {new}: {text[-80:]!r}")
    print("texts                                  judged  verdict changed  fail (with the screen)")
    for key in judged:
        print(f"{key:36s} {judged[key]:8,d}  {changed[key]:15d}  {failed[key]:22,d}")


def cpu_table(n: int) -> None:
    replies = [t.text for t in texts() if t.role == "clean" and t.corpus != "ftfy"][:n]
    replies.append('*He pulls the blanket over your shoulders and sits down beside you by the window.* '
                   '"The rain won\u2019t stop before morning, so there\u2019s no point in hurrying home." "')

    def block() -> float:
        spent = 0.0
        for text in replies:
            time.sleep(0.01)
            start = time.thread_time()
            check_language_mixing(text, None)
            spent += time.thread_time() - start
        return spent / len(replies) * 1000.0

    with_screen, without = [], []
    for _ in range(3):
        with_screen.append(block())
        with without_screen():
            without.append(block())
    print(f"language_mixing, no language, {len(replies)} replies x 3 alternating blocks, thread CPU per reply "
          f"(median of blocks): with the screen {statistics.median(with_screen):.2f} ms, "
          f"without {statistics.median(without):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=272, help="ordered language pairs of NTREX mixes (272: all)")
    parser.add_argument("--cpu-replies", type=int, default=200, help="real replies in each CPU block")
    args = parser.parse_args()
    if args.pairs < 0 or args.cpu_replies < 1:
        parser.error("--pairs must be at least 0 and --cpu-replies at least 1")
    detector.warm_up()
    sentences_table()
    verdicts_table(args.pairs)
    cpu_table(args.cpu_replies)


if __name__ == "__main__":
    main()
