"""Policy citations that decline vs. ones that advise (written for this project).

``GENERIC_POLICY``: per language, the positions in ``PHRASES[code]["policy"]`` of the
generic phrases ("content / usage / safety policy"), moved by the package to the
``policy_generic`` kind; ``OWN_POLICY``: phrases of the model's own rules added to
``policy`` after that move; ``VIOLATION``: the words that make a generic phrase count.
"""

from __future__ import annotations

# "my guidelines", "against my programming": the model speaking of its own rules, a
# refusal. "content / usage / safety policy" is also how a how-to advises ("follow the
# food safety guidelines"), so it counts only in a sentence that says the request goes
# against it (``VIOLATION``).
GENERIC_POLICY: dict[str, tuple[int, ...]] = {
    "en": (0,), "pt": (1, 2), "es": (1, 2), "fr": (1, 2), "de": (1,), "it": (1, 2),
    "nl": (1,), "pl": (1,), "ru": (1, 2), "uk": (1, 2), "tr": (1,), "ja": (0,), "ko": (0,),
    "zh": (0,), "id": (0,), "vi": (0,), "ar": (1,),
}
# More phrases of the model's own rules, added to ``policy`` after the generic phrases
# move out (the positions above are those of the first table).
OWN_POLICY: dict[str, list[str]] = {
    "id": [r"\b(?:pedoman|kebijakan|panduan)\s+(?:saya|kami)\b"],
    "vi": [r"\b(?:chính\s+sách|nguyên\s+tắc|hướng\s+dẫn)\s+của\s+tôi\b"],
    "en": [r"\bagainst\s+my\s+(?:\w+\s+)?(?:programming|principles|rules)\b"],
}

# Words that say a request goes against a rule, in the 17 languages (one pattern, tried
# on the sentence holding a generic policy phrase).
VIOLATION = (
    r"\b(?:violat\w*|against|breach\w*|contrary\s+to|prohibit\w*|not\s+(?:allowed|permitted)"
    r"|viola\w*|contra\b|fere\b|infring\w*|contre\b|enfreint\w*|contraire|gegen\b|versto\w*"
    r"|verletz\w*|widersprich\w*|contro\b|contrari\w*|tegen\b|schend\w*|in\s+strijd|narusza\w*"
    r"|wbrew|sprzeczn\w*|наруша\w*|противореч\w*|против\b|поруш\w*|суперечи\w*|проти\b"
    r"|aykırı\w*|ihlal\w*|melanggar|bertentangan|vi\s+phạm|trái\s+với)"
    r"|反し|違反|抵触|위반|어긋|반하|[违違][反背]|不符合|ينتهك|يخالف|تتعارض|مخالف"
)
