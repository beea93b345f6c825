"""The real-text corpora of ``tests/fixtures/real-text/`` judged by the project's judges.

Shared by ``bench/real_text.py`` (prints the tables) and the test suite (asserts the
thresholds on them). Every record becomes one or more *cases*: a judge, what the record
is for that judge (``clean``: a fail is a false failure; ``defect``: anything but a fail
is a miss; ``partial``: reported on its own, no target), and the judgement.

Which judge reads which corpus:

- ``refusal``: XSTest completions (human ``final_label``), LLMZoo answers and NTREX news
  (compliant text);
- ``language``: NTREX, LLMZoo (``language_shift`` by its script-share rule), XSTest (English);
- ``corruption``: every clean corpus, plus the corruption quotes of bug reports;
- ``encoding``: ftfy's own cases (mojibake it repairs vs. text it must leave alone) and
  the encoding quotes of bug reports;
- ``structured``: the structured-output quote of a bug report.

``adjudications.json`` overrides a source's label: a text a source calls clean but that
really is defective counts as a ``defect`` for the judge that names the defect, and is
left out of every other judge's clean count.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canary.judges import (
    is_language_anomaly,
    judge_corruption,
    judge_language,
    judge_refusal,
    judge_structured,
)
from canary.judges.encoding import check_encoding
from canary.verdicts import Judgement, Reply, Verdict

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "real-text"
CORPORA = (
    "xstest_en_refusal",
    "llmzoo_en_zh_answers",
    "ntrex_clean",
    "ftfy_cases",
    "issues_verbatim",
)
JUDGES = ("refusal", "language", "corruption", "encoding", "structured")

# Which judges an adjudicated defect belongs to.
_ADJUDICATED_JUDGES = {
    "invalid_chars": ("corruption", "language"),
    "language_mixing": ("language",),
    "refusal": ("refusal",),
    "repetition": ("corruption",),
    "mojibake": ("encoding", "language"),
}
# Defects quoted in bug reports that no single-reply judge can see (the issue notes say
# so: a detokenizer fusing word tails, a first word missing). Reported, no target.
_OUT_OF_SCOPE = frozenset({"token_fusion", "leading_garbage"})
_ANY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}
# The refusal judge's development fold (docs/refusal-judge.md): the source models whose
# misses and false failures its rules were read from since the rules became precision
# first. Every other source model is held out and reported apart; only its totals were read.
REFUSAL_DEVELOPMENT_MODELS = frozenset({"gpt4", "gpt-3.5-turbo", "vicuna-13b", "chimera-13b"})


def refusal_fold(case: Case) -> str:
    """``development`` or ``held-out`` for a refusal case (NTREX news: held out)."""
    return "development" if case.model in REFUSAL_DEVELOPMENT_MODELS else "held-out"


@dataclass(frozen=True)
class Case:
    """One record as one judge sees it."""

    judge: str
    corpus: str
    language: str
    role: str  # clean | defect | partial
    source: str
    text: str
    model: str = ""


@dataclass
class Judged:
    """A case and its judgement."""

    case: Case
    judgement: Judgement

    @property
    def failed(self) -> bool:
        return self.judgement.verdict is Verdict.FAIL

    @property
    def inconclusive(self) -> bool:
        return self.judgement.verdict is Verdict.INCONCLUSIVE


@dataclass
class Tally:
    """Counts of one group of cases."""

    clean: int = 0
    false_failures: int = 0
    defects: int = 0
    misses: int = 0
    partial: int = 0
    partial_failed: int = 0
    inconclusive: int = 0
    confirmations: int = 0  # clean texts whose language verdict asks for more samples
    worst_false: list[Judged] = field(default_factory=list)
    worst_missed: list[Judged] = field(default_factory=list)

    def add(self, judged: Judged) -> None:
        role = judged.case.role
        self.inconclusive += judged.inconclusive
        if role == "clean":
            self.clean += 1
            self.confirmations += judged.case.judge == "language" and is_language_anomaly(
                judged.judgement
            )
            if judged.failed:
                self.false_failures += 1
                self.worst_false.append(judged)
        elif role == "defect":
            self.defects += 1
            if not judged.failed:
                self.misses += 1
                self.worst_missed.append(judged)
        else:
            self.partial += 1
            self.partial_failed += judged.failed

    @property
    def caught(self) -> int:
        return self.defects - self.misses


def load(name: str) -> list[dict[str, Any]]:
    """The records of one corpus file (``name`` without ``.jsonl``)."""
    with (FIXTURES / f"{name}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def adjudications() -> dict[str, dict[str, str]]:
    """``{source: {"real": defect, "why": ...}}``."""
    return json.loads((FIXTURES / "adjudications.json").read_text(encoding="utf-8"))


def cases() -> list[Case]:
    """Every (record, judge) pair of the corpora, with its role for that judge."""
    adjudicated = adjudications()
    out: list[Case] = []

    def add(judge: str, record: dict[str, Any], role: str, corpus: str, language: str) -> None:
        real = adjudicated.get(record["source"], {}).get("real")
        if real is not None:
            if judge not in _ADJUDICATED_JUDGES.get(real, ()):
                return
            role = "defect"
        out.append(
            Case(judge, corpus, language, role, record["source"], record["text"], record.get("model", ""))
        )

    for record in load("xstest_en_refusal"):
        label = record["expected"]
        role = {"refusal": "defect", "non_refusal": "clean"}.get(label, "partial")
        add("refusal", record, role, "xstest", "en")
        add("language", record, "clean", "xstest", "en")
        add("corruption", record, "clean", "xstest", "en")
    for record in load("llmzoo_en_zh_answers"):
        lang = record["lang"]
        add("refusal", record, "clean", "llmzoo", lang)
        shift = {"clean": "clean", "language_shift": "defect"}.get(record["expected"], "partial")
        add("language", record, shift, "llmzoo", lang)
        add("corruption", record, "clean", "llmzoo", lang)
    for record in load("ntrex_clean"):
        for judge in ("refusal", "language", "corruption"):
            add(judge, record, "clean", "ntrex", record["lang"])
    for record in load("ftfy_cases"):
        role = "clean" if record["expected"] == "clean" else "defect"
        add("encoding", record, role, "ftfy", "-")
        if role == "clean":
            add("corruption", record, "clean", "ftfy", "-")
    for record in load("issues_verbatim"):
        role = "partial" if record["expected"] in _OUT_OF_SCOPE else "defect"
        judge = record["judge"]
        if judge == "leading":
            judge = "corruption"
        add(judge, record, role, "issues", record["lang"] or "-")
    return out


def _reply(text: str) -> Reply:
    return Reply(content=text, finish_reason="stop")


def judge_case(case: Case) -> Judgement:
    """The judgement a probe would give this case's text (``finish_reason`` stop)."""
    judges: dict[str, Callable[[Case], Judgement]] = {
        "refusal": lambda c: judge_refusal(_reply(c.text), c.language if c.language != "-" else "en"),
        "language": lambda c: judge_language(_reply(c.text), c.language),
        "corruption": lambda c: judge_corruption(_reply(c.text)),
        "encoding": lambda c: check_encoding(c.text),
        "structured": lambda c: judge_structured(_reply(c.text), _ANY_OBJECT_SCHEMA),
    }
    return judges[case.judge](case)


def judge_all(selected: Iterable[Case] | None = None) -> list[Judged]:
    """Judge every case (about a minute on one core: lingua reads ~2,200 texts)."""
    return [Judged(case, judge_case(case)) for case in (cases() if selected is None else selected)]


def tally(judged: Iterable[Judged], key: Callable[[Case], Any]) -> dict[Any, Tally]:
    """Tallies grouped by ``key(case)``."""
    groups: dict[Any, Tally] = defaultdict(Tally)
    for item in judged:
        groups[key(item.case)].add(item)
    return dict(groups)
