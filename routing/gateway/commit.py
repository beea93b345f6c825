"""The commit point of a streamed answer: when to stop holding, and what the held prefix,
the finished stream and a whole answer are judged by. Pure.

The checks are ``routing.live_checks`` (the canary's own judges, each allowed to block
only where real text says it may). The commit point is the earliest moment every
blocking check has decided on the held prefix (``Checks.decided``: each says from how
many characters it can), capped by the contract's hold (``hold_over``); a contract with
``stream_commit.early`` false waits for the whole hold, as the first streaming gateway
did. A blocking ``fail`` rejects the prefix at once; ``inconclusive`` at the end of the
hold commits.
"""

from __future__ import annotations

from collections.abc import Sequence

from routing.contracts import StreamCommit
from routing.gateway.result import GatewayResult
from routing.live_checks import (
    ANSWER_BLOCKING,
    EVIDENCE_CHECKS,
    PREFIX_CHECKS,
    REPLY_BLOCKING,
    Checks,
    run_checks,
)

__all__ = ["Checks", "answer_checks", "commit_now", "hold_over", "judge_evidence", "prefix_checks", "reply_checks"]


def hold_over(commit: StreamCommit, *, content_chars: int, first_content_at_s: float | None, now_s: float) -> bool:
    """True once the held prefix reaches ``hold_chars`` characters or ``hold_ms`` ms have
    passed since its first content (monotonic seconds), whichever comes first."""
    if first_content_at_s is None:
        return False
    return content_chars >= commit.hold_chars or (now_s - first_content_at_s) * 1000.0 >= commit.hold_ms


def commit_now(commit: StreamCommit, checks: Checks, *, hold_is_over: bool) -> bool:
    """Whether the prefix judged by ``checks`` ends the hold now: a blocking failure
    (rejected at once), every blocking check decided (under ``commit.early``), or the
    hold over."""
    return hold_is_over or not checks.ok or (commit.early and checks.decided)


def prefix_checks(text: str, language: str | None) -> Checks:
    """The pre-commit checks of a held prefix (``routing.live_checks.PREFIX_CHECKS``)."""
    return run_checks(PREFIX_CHECKS, text, language)


def reply_checks(text: str, language: str | None) -> Checks:
    """The blocking post-stream checks of a reply already sent (``REPLY_BLOCKING``): a
    failure ends the stream with an error event. Its evidence waits (``judge_evidence``)."""
    return run_checks(REPLY_BLOCKING, text, language)


def answer_checks(text: str, language: str | None) -> Checks:
    """The blocking checks of a whole answer that was not streamed (or was buffered),
    before it is accepted (``ANSWER_BLOCKING``: the opener and the reply's). Its evidence
    waits (``judge_evidence``)."""
    return run_checks(ANSWER_BLOCKING, text, language)


def judge_evidence(results: Sequence[GatewayResult]) -> None:
    """Judge the evidence-only checks (``EVIDENCE_CHECKS``: the refusal judge) of every
    attempt whose whole reply waits for them (``AttemptRecord.evidence_due``), in its
    request's expected language: their verdicts join the attempt's checks under the same
    stage (``answer.refusal``, ``post.refusal``) and its validation note (``"; answer
    evidence: refusal=pass"``). A listener of the gateway's event sink (``routing.events``), so it runs
    after the answer went out and before the scorecard counts it and the event is
    written. Each record's checks and note are replaced, never changed in place: a
    request thread may still be reading them for its error body. Never raises (the
    judges never do)."""
    for result in results:
        for record in result.attempts:
            due = record.evidence_due
            if due is None:
                continue
            stage, text = due
            record.evidence_due = None
            checks = run_checks(EVIDENCE_CHECKS, text, result.language)
            if checks.verdicts:
                record.checks = {**record.checks, **{f"{stage}.{k}": v for k, v in checks.verdicts.items()}}
                record.validation = "; ".join(filter(None, (record.validation, checks.summary(f"{stage} evidence"))))
