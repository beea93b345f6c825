"""The commit point of a streamed answer: when to stop holding, and what the held prefix
and the finished stream are judged by. Pure.

The checks are the canary's own judges (``canary.judges.prefix``), the same functions
its rounds run, so a host the canary would call corrupt is routed around on live traffic
before a client sees a byte. Only a ``fail`` rejects; ``inconclusive`` (a prefix too
short to judge) commits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from canary.judges.language import judge_language
from canary.judges.prefix import judge_prefix, judge_streamed_reply
from canary.verdicts import Judgement, Reply
from routing.contracts import StreamCommit


@dataclass(frozen=True)
class Checks:
    """Check name -> verdict (``pass``, ``fail``, ``inconclusive``), and the reason of the
    first failure ("" when none failed)."""

    verdicts: dict[str, str]
    failed: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self, stage: str) -> str:
        """``"prefix: leading_garbage=pass, ..."``: what the attempt event stores."""
        return f"{stage}: " + ", ".join(f"{k}={v}" for k, v in self.verdicts.items())


def hold_over(commit: StreamCommit, *, content_chars: int, first_content_at_s: float | None, now_s: float) -> bool:
    """True once the held prefix reaches ``hold_chars`` characters or ``hold_ms`` ms have
    passed since its first content (monotonic seconds), whichever comes first."""
    if first_content_at_s is None:
        return False
    return content_chars >= commit.hold_chars or (now_s - first_content_at_s) * 1000.0 >= commit.hold_ms


def _checks(judge: Callable[[str, str | None], list], text: str, language: str | None) -> Checks:
    verdicts: dict[str, str] = {}
    failed = ""
    for judgement in judge(text, language):
        verdict = judgement.verdict.value
        verdicts[judgement.check] = verdict
        if verdict == "fail" and not failed:
            failed = f"{judgement.check}: {judgement.reason}"
    return Checks(verdicts, failed)


def prefix_checks(text: str, language: str | None) -> Checks:
    """The pre-commit checks of a held prefix (``canary.judges.prefix.judge_prefix``)."""
    return _checks(judge_prefix, text, language)


def reply_checks(text: str, language: str | None) -> Checks:
    """The post-stream checks of a reply already sent (``judge_streamed_reply``)."""
    return _checks(judge_streamed_reply, text, language)


def _answer_language(text: str, language: str | None) -> list[Judgement]:
    return [judge_language(Reply(content=text), language)] if language else []


def answer_checks(text: str, language: str | None) -> Checks:
    """The checks of a whole answer that was not streamed, before it is accepted: its
    language when one is expected (``judge_language``, as on a streamed prefix); none
    otherwise."""
    return _checks(_answer_language, text, language)
