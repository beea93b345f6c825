"""High-confidence refusal phrases in the 17 interface languages (written for this project).

Three strong kinds fail a reply when they appear in narration (docs/sources/text-checks.md, "Refusals"):

- ``opener``: "I can't / won't / am unable to" followed by an *assistance* verb and what
  it refuses: "help with this/that" (or "help." ending the sentence), assist, comply,
  "provide/create/write such content", "continue this story", "this request". A bare
  "I can't" is not enough: characters say "I can't go with you" and "I can't help but
  smile" all the time, and a generic list matched anywhere raised 3/73 false alarms ("Refusals").
- ``ai_marker``: the assistant speaking of itself as an AI or language model
  ("as an AI language model", "como uma IA,", "作为一个AI"). Bare "an AI" is left out:
  robot characters exist ("Refusals" trap "Como uma IA de navegação…").
- ``policy``: content/usage/safety policy or "my guidelines" vocabulary.

``soft`` deflections (change of topic, "I'd rather not…") are only ever ``inconclusive``:
phrase rules cannot tell them from a character's choice ("Order of checks").

``PATTERNS`` (language -> kind -> patterns) is assembled here, in this order, from:
``phrases`` (the four kinds above), ``declines`` (a refusal of the request itself and
declines generalised over what is refused, both appended to ``opener``), ``lectures``
(the ``lecture`` kind: a reply that opens by judging the request) and
``policy_citations`` (generic policy phrases moved to ``policy_generic``, which count only
beside a ``VIOLATION`` word). ``after_decline`` holds what changes a decline's meaning
(``LIMITATION``, ``PIVOT``); ``needs_question`` the shapes only the question can judge
(``PREMISE`` after a decline, the ``stance`` and ``referral`` kinds: never ``fail``);
``fragments`` the pieces the tables share.

Patterns are matched case-insensitively on NFC text; Arabic is matched after removing
harakat and tatweel (see ``refusal.arabic_folded``).
"""

from __future__ import annotations

from canary.judges.refusal_patterns.after_decline import LIMITATION, PIVOT
from canary.judges.refusal_patterns.declines import DECLINES, REQUEST_REFUSAL, request_refusal
from canary.judges.refusal_patterns.lectures import LECTURES
from canary.judges.refusal_patterns.needs_question import PREMISE, REFERRAL, STANCE
from canary.judges.refusal_patterns.phrases import PHRASES
from canary.judges.refusal_patterns.policy_citations import GENERIC_POLICY, OWN_POLICY, VIOLATION

__all__ = ["LIMITATION", "PATTERNS", "PIVOT", "PREMISE", "VIOLATION"]

# Copies: the tables of the modules stay as written.
PATTERNS: dict[str, dict[str, list[str]]] = {
    code: {kind: list(patterns) for kind, patterns in kinds.items()} for code, kinds in PHRASES.items()
}
for _code, (_cant, _request) in REQUEST_REFUSAL.items():
    PATTERNS[_code]["opener"].append(request_refusal(_cant, _request, _code in ("ja", "ko", "zh")))
for _code, _patterns in DECLINES.items():
    PATTERNS[_code]["opener"].extend(_patterns)
for _code, _patterns in LECTURES.items():
    PATTERNS[_code]["lecture"] = list(_patterns)
for _code, _indexes in GENERIC_POLICY.items():
    _policies = PATTERNS[_code]["policy"]
    PATTERNS[_code]["policy_generic"] = [_policies[i] for i in _indexes]
    PATTERNS[_code]["policy"] = [p for i, p in enumerate(_policies) if i not in _indexes]
for _code, _patterns in STANCE.items():
    PATTERNS[_code]["stance"] = list(_patterns)
for _code, _patterns in REFERRAL.items():
    PATTERNS[_code]["referral"] = list(_patterns)
for _code, _patterns in OWN_POLICY.items():
    PATTERNS[_code]["policy"].extend(_patterns)
