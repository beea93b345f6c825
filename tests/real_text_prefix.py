"""The gateway's live checks on real third-party text, as a stream's held prefix and as a
whole reply: each check's false-block rate on clean replies and catch rate on real
defects (issue "The live path costs no good reply", point 1).

Shared by ``bench/real_text.py --prefix`` (prints the tables) and the test suite (asserts
that every check allowed to block stays within its limits). Texts: the corpora of
``tests/fixtures/real-text`` (``tests.real_text.load``). Clean: XSTest compliant answers,
LLMZoo answers, NTREX news in 17 languages, ftfy's must-not-change cases; an adjudicated
text is a defect, never clean. Defects: XSTest refusals, LLMZoo language shifts, ftfy's
mojibake, bug-report quotes, adjudicated texts. Each text is judged with its own language
as the expected one (what a header, a contract or the conversation would name), or None
for the language-less ftfy cases.

Two readings of a source's label, both printed (``strict`` False by default): a label
speaks for the defect its rule is about. ftfy's "must not change" cases are clean for
the mojibake check (they are ftfy's test strings, not replies: one holds a control
character on purpose) and not counted for the other checks; LLMZoo's label is a script
share (``label_rule``), and every vicuna-7b answer opens with ``": "``, its chat
template's colon: a junk opener, counted as a ``leading_garbage`` defect (and clean for
the other checks). ``strict=True`` counts every labelled-clean text clean for every check.

Held-out split (rules are written on ``tuned`` and read on ``held_out``): by source
model, XSTest ``llama2orig`` and LLMZoo ``phoenix-7b``, ``chimera-13b`` and
``chinese-alpaca-7b`` are held out; NTREX and ftfy (one source each) by record parity.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from routing.live_checks import LiveCheck, run_checks
from tests.real_text import adjudications, load

PREFIX_LENGTHS = (32, 64, 128)
WHOLE = 0  # the length key of a whole reply
HELD_OUT_MODELS = frozenset({"llama2orig", "phoenix-7b", "chimera-13b", "chinese-alpaca-7b"})
# The limits a check must meet to block (issue point 1).
MAX_OVERALL = 0.001
MAX_PER_SOURCE = 0.005


@dataclass(frozen=True)
class Text:
    """One real text: ``role`` clean or defect, ``kind`` its defect (or "clean"),
    ``source`` the model that wrote it (``ntrex``, ``ftfy``, ``issues`` otherwise),
    ``language`` ISO 639-1 or None, ``held_out`` its split."""

    corpus: str
    role: str
    kind: str
    source: str
    language: str | None
    text: str
    held_out: bool
    # The checks this text counts for (None: all of them).
    only: frozenset[str] | None = None
    # The checks it does not count for.
    skip: frozenset[str] = frozenset()

    def counts_for(self, check: str) -> bool:
        return check not in self.skip and (self.only is None or check in self.only)


_TEMPLATE_COLON = re.compile(r"\A\s*:\s")


def texts(*, strict: bool = False) -> list[Text]:
    """Every clean text and every real defect of the corpora, once each (``strict``: see
    the module docstring)."""
    adjudicated = adjudications()
    out: list[Text] = []

    def add(corpus: str, record: dict, role: str, kind: str, source: str, held_out: bool) -> None:
        real = adjudicated.get(record["source"], {}).get("real")
        if real is not None:
            role, kind = "defect", real
        lang = record.get("lang")
        text = record["text"]
        if not strict and role == "clean" and corpus == "ftfy":
            out.append(Text(corpus, role, kind, source, lang, text, held_out, only=frozenset({"mojibake"})))
            return
        if not strict and role == "clean" and corpus == "llmzoo" and _TEMPLATE_COLON.match(text):
            out.append(Text(corpus, "defect", "leading_garbage", source, lang, text, held_out,
                            only=frozenset({"leading_garbage"})))
            out.append(Text(corpus, role, kind, source, lang, text, held_out, skip=frozenset({"leading_garbage"})))
            return
        out.append(Text(corpus, role, kind, source, lang, text, held_out))

    for record in load("xstest_en_refusal"):
        label = record["expected"]
        if label in ("refusal", "non_refusal"):
            role = "clean" if label == "non_refusal" else "defect"
            add("xstest", record, role, "clean" if role == "clean" else "refusal", record["model"],
                record["model"] in HELD_OUT_MODELS)
    for record in load("llmzoo_en_zh_answers"):
        label = record["expected"]
        if label in ("clean", "language_shift"):
            add("llmzoo", record, "clean" if label == "clean" else "defect", label, record["model"],
                record["model"] in HELD_OUT_MODELS)
    for i, record in enumerate(load("ntrex_clean")):
        add("ntrex", record, "clean", "clean", "ntrex", i % 2 == 1)
    for i, record in enumerate(load("ftfy_cases")):
        role = "clean" if record["expected"] == "clean" else "defect"
        add("ftfy", record, role, "clean" if role == "clean" else "mojibake", "ftfy", i % 2 == 1)
    for i, record in enumerate(load("issues_verbatim")):
        if record["expected"] not in ("token_fusion", "structured_fail"):
            add("issues", record, "defect", record["expected"], "issues", i % 2 == 1)
    return out


@dataclass
class Count:
    """Clean texts and false blocks, defects and catches, at one length."""

    clean: int = 0
    blocked: int = 0
    defects: int = 0
    caught: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.blocked / self.clean if self.clean else 0.0


# check -> length -> group -> Count
Table = dict[str, dict[int, dict[str, Count]]]


def measure(checks: tuple[LiveCheck, ...], items: Iterable[Text], lengths: tuple[int, ...] = PREFIX_LENGTHS,
            groups: Callable[[Text], list[str]] | None = None, *, no_language: bool = False) -> Table:
    """Run every check of ``checks`` on the first ``length`` characters of each text
    (``WHOLE`` = 0: the whole text), whatever its ``blocks``; a check fails a text when
    its verdict is ``fail``. Group keys default to ``ALL``, ``lang <code>`` and ``source <name>``;
    the pseudo-check ``ANY (blocking)`` fails when any blocking check does. ``no_language``:
    judge every text with no expected language (a conversation that names none)."""
    groups = groups or (lambda t: ["ALL", f"lang {t.language or '-'}", f"source {t.source}"])
    table: Table = defaultdict(lambda: defaultdict(lambda: defaultdict(Count)))
    for item in items:
        keys = groups(item)
        for length in lengths:
            text = item.text if length == WHOLE else item.text[:length]
            result = run_checks(checks, text, None if no_language else item.language)
            blocking = {c.name for c in checks if c.blocks}
            failed = {name for name, verdict in result.verdicts.items() if verdict == "fail"}
            counted = {name for name in result.verdicts if item.counts_for(name)}
            for name in [*counted, "ANY (blocking)"]:
                hit = bool(failed & blocking & counted) if name == "ANY (blocking)" else name in failed
                for key in keys:
                    count = table[name][length][key]
                    if item.role == "clean":
                        count.clean += 1
                        if hit:
                            count.blocked += 1
                            if key == "ALL" and len(count.examples) < 5:
                                count.examples.append(f"[{item.source}/{item.language}] {text[:90]!r}")
                    else:
                        count.defects += 1
                        count.caught += hit
    return table


def within_limits(table: Table, check: str) -> list[str]:
    """What breaks the blocking limits for ``check`` in ``table`` (empty when none):
    over 0.1 % of all clean texts, or over 0.5 % of one source's, at any length."""
    problems = []
    for length, by_group in table.get(check, {}).items():
        for key, count in by_group.items():
            limit = MAX_OVERALL if key == "ALL" else MAX_PER_SOURCE if key.startswith("source ") else None
            if limit is not None and count.clean and count.rate > limit:
                problems.append(f"{check} at {length or 'whole'}: {key} {count.blocked}/{count.clean} = {count.rate:.2%}")
    return problems
