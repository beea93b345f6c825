"""A malformed reply is a verdict, never a crash, and its evidence is safe to store.

The judges read whatever a provider sent. Their rules handle the odd inputs we know
(None, huge text, lone surrogates); ``never_raise`` turns anything we did not foresee
into an ``inconclusive`` judgement, logged with its traceback, so one strange reply
cannot abort a whole canary round. It also passes the evidence through ``json_safe``:
excerpts of a reply may hold lone surrogates or NUL characters, which ``json.dumps``
accepts but PostgreSQL's jsonb rejects ("unsupported Unicode escape sequence").
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import Any, ParamSpec

from canary.verdicts import Judgement, Verdict
from core.text import storable

logger = logging.getLogger(__name__)

P = ParamSpec("P")



def json_safe(value: Any) -> Any:
    """Return ``value`` as plain JSON data: dicts with string keys, lists, finite numbers,
    strings without NUL or lone surrogates (each replaced by U+FFFD); anything else via
    ``str()``."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {json_safe(str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return json_safe(str(value))


def never_raise(check: str) -> Callable[[Callable[P, Judgement]], Callable[P, Judgement]]:
    """Decorate a judge: an unexpected exception yields ``inconclusive`` for ``check``
    (evidence ``{"judge_error": "<Type>: <message, 200 chars>"}``), and every returned
    judgement's evidence goes through ``json_safe``."""

    def decorate(judge: Callable[P, Judgement]) -> Callable[P, Judgement]:
        @functools.wraps(judge)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> Judgement:
            try:
                judgement = judge(*args, **kwargs)
            except Exception as exc:  # the guard's whole purpose; see module docstring
                logger.exception("judge %s raised on odd input", judge.__name__)
                judgement = Judgement(
                    Verdict.INCONCLUSIVE,
                    check,
                    f"The judge could not read this reply ({type(exc).__name__}).",
                    {"judge_error": f"{type(exc).__name__}: {str(exc)[:200]}"},
                )
            return Judgement(
                judgement.verdict,
                judgement.check,
                json_safe(judgement.reason),
                json_safe(judgement.evidence),
            )

        return guarded

    return decorate
