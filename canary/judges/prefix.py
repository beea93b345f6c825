"""The judges a held prefix of a streamed reply can decide, composed from the canary's own.

A gateway that streams holds the first characters of a reply before its first byte goes
to the client (its commit point) and asks these checks whether to pass the reply on or
to try another host. Each check is the canary's rule, unchanged, applied to the prefix:

- ``leading_garbage``: ``leading_signature`` on the prefix (stray punctuation, a glued
  token fragment, a combining mark, an invisible opener, the stream's framing). The canary needs the same junk in several replies of
  a round before it suspends a host; a live request cannot wait for a round, and the cost
  of a false alarm here is one invisible fallback, so one signature rejects the prefix;
- ``template_leak``, ``bpe_glyphs``, ``encoding`` (invalid characters): the corruption
  judges' character-level checks;
- ``refusal``: ``judge_refusal`` (a refusal opener, an AI marker or a policy citation in
  the narration);
- ``language``: ``judge_language`` when the expected language is known.

A check that cannot decide on so little text says ``inconclusive`` (the judges' own
minimums, e.g. 20 letters for a language reading); only ``fail`` rejects a prefix.
"""

from __future__ import annotations

from canary.judges.corruption import check_bpe_glyphs, check_repetition, check_template_leak
from canary.judges.encoding import check_invalid_chars
from canary.judges.language import judge_language
from canary.judges.leading import leading_signature
from canary.judges.refusal import judge_refusal
from canary.verdicts import Judgement, Reply, Verdict

# Below this many non-space characters a leading fragment cannot be told from a word.
MIN_LEADING_CHARS = 6


def judge_prefix(text: str, language: str | None = None) -> list[Judgement]:
    """Judge the held prefix ``text`` of a streamed reply, one ``Judgement`` per check, in
    the order ``leading_garbage``, ``template_leak``, ``bpe_glyphs``, ``encoding``,
    ``refusal`` and, when ``language`` (ISO 639-1) is given, the language checks (whose
    ``check`` names the rule that decided). Never raises."""
    stripped = text.strip()
    judgements: list[Judgement] = []
    if len(stripped) < MIN_LEADING_CHARS:
        judgements.append(Judgement(Verdict.INCONCLUSIVE, "leading_garbage", "Prefix too short to judge its opener.",
                                    {"chars": len(stripped)}))
    else:
        signature = leading_signature(text)
        if signature is None:
            judgements.append(Judgement(Verdict.PASS, "leading_garbage", "The reply starts normally.", {}))
        else:
            judgements.append(Judgement(Verdict.FAIL, "leading_garbage", f"The reply starts with junk ({signature}).",
                                        {"signature": signature}))
    judgements.append(check_template_leak(text))
    judgements.append(check_bpe_glyphs(text))
    judgements.append(check_invalid_chars(text))
    reply = Reply(content=text, finish_reason=None)
    judgements.append(judge_refusal(reply, language or "en"))
    if language:
        judgements.append(judge_language(reply, language))
    return judgements


def judge_streamed_reply(text: str, language: str | None = None) -> list[Judgement]:
    """Judge a whole reply that was already streamed to its client, for the route's health:
    ``template_leak``, ``bpe_glyphs``, ``encoding`` (invalid characters), ``repetition``
    and, when ``language`` is given, the language checks. Never raises."""
    judgements = [check_template_leak(text), check_bpe_glyphs(text), check_invalid_chars(text), check_repetition(text)]
    if language:
        judgements.append(judge_language(Reply(content=text), language))
    return judgements
