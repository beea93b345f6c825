"""Build every judge before a process accepts work. Pure (no Django, no I/O but the
language models' own loading).

The first request that needed the language detector used to load its 17 preloaded lingua
models on its own path (1-3 s, ~380 MiB, docs/sources/text-checks.md, "Language"); a
background thread that loaded them meanwhile held the GIL, so the first streamed replies
after a start reached their first content at 2 s instead of 0.5 s. ``warm_judges`` runs
each judge the gateway and the canary use once, on a short sample per script, in the
calling thread: the detector and its models, the regular expressions compiled on first
use, ftfy's tables, jsonschema's format checkers. Call it where a process starts, before
it accepts work: the gunicorn worker (or, with ``preload_app``, the arbiter before it
forks, so the workers share the models' pages), ``runserver``, the Celery worker,
``judge_text``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from canary.judges.corruption import judge_corruption
from canary.judges.language import judge_language
from canary.judges.refusal import judge_refusal
from canary.judges.structured import judge_structured
from canary.verdicts import Reply
from core.language_detector import warm_up

# One sample per script family the judges treat differently (Latin, CJK, Arabic, Cyrillic,
# Hangul), with the ISO 639-1 code the reply should be in.
SAMPLES: tuple[tuple[str, str], ...] = (
    ("en", "*She smiles and sets the lantern down.* \"Sit by the fire, traveller, and tell me of the road.\""),
    ("ja", "*彼女は微笑んでランタンを置いた。*「旅人さん、火のそばに座って道の話を聞かせてください。」"),
    ("ar", "*تبتسم وتضع الفانوس جانبا.* \"اجلس بجانب النار أيها المسافر وحدثني عن الطريق.\""),
    ("ru", "*Она улыбается и ставит фонарь.* «Садись у огня, путник, и расскажи мне о дороге.»"),
    ("ko", "*그녀는 미소 지으며 등불을 내려놓는다.* \"나그네여, 불 곁에 앉아 길 이야기를 들려주세요.\""),
)
_SCHEMA = {"type": "object", "required": ["when", "who"], "properties": {
    "when": {"type": "string", "format": "date-time"}, "who": {"type": "string", "format": "email"},
    "id": {"type": "string", "format": "uuid"}, "link": {"type": "string", "format": "uri"}}}
_STRUCTURED = '{"when": "2026-12-03T19:30:00Z", "who": "mira@example.org", "link": "https://example.org/a"}'


def warm_judges(clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Build the detector and run every judge once per sample. Returns the time each
    step took, in ms (``{"detector": 1840.2, "judges": 95.1}``), for the start-up log.
    Never raises for the samples' sake: the judges themselves never raise."""
    took: dict[str, float] = {}
    start = clock()
    warm_up()
    took["detector"] = (clock() - start) * 1000.0
    start = clock()
    for language, text in SAMPLES:
        reply = Reply(content=text)
        judge_language(reply, language)
        judge_refusal(reply, language)
        judge_corruption(reply)
    judge_structured(Reply(content=_STRUCTURED), _SCHEMA)
    took["judges"] = (clock() - start) * 1000.0
    return took
