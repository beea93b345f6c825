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

from routing.contracts import StreamCommit
from routing.live_checks import ANSWER_CHECKS, PREFIX_CHECKS, REPLY_CHECKS, Checks, run_checks

__all__ = ["Checks", "answer_checks", "hold_over", "prefix_checks", "reply_checks", "commit_now"]


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
    """The post-stream checks of a reply already sent (``REPLY_CHECKS``): a blocking
    failure ends the stream with an error event."""
    return run_checks(REPLY_CHECKS, text, language)


def answer_checks(text: str, language: str | None) -> Checks:
    """The checks of a whole answer that was not streamed (or was buffered), before it is
    accepted (``ANSWER_CHECKS``: the blocking prefix checks and the reply checks)."""
    return run_checks(ANSWER_CHECKS, text, language)
