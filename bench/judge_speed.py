"""Median time to judge one ~500-character reply with every prose check, after warm-up.

Usage: ``.venv/bin/python bench/judge_speed.py [iterations]`` (default 1000).
Target: under 10 ms per reply. The detector is built first (``warm_up``), as a
worker does at start-up, so the one-off model load (1–3 s) is not in the figures.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from canary.judges import (  # noqa: E402 (path set above)
    judge_corruption,
    judge_language,
    judge_refusal,
    judge_structured,
    judge_ttft,
    leading_signature,
    warm_up,
)
from canary.verdicts import Reply  # noqa: E402

# Own words: a Portuguese roleplay reply of about 500 characters.
REPLY_TEXT = (
    "*Ela fecha o caderno de couro e olha pela janela, onde a chuva insiste em cair "
    "sobre os telhados do porto.* Você chegou bem na hora. O farol apagou de novo "
    "ontem à noite, e ninguém na vila quer subir até lá sozinho. — Eu sei que parece "
    "bobagem — ela sorri, meio sem graça —, mas o velho Tomás jura que ouviu passos "
    "na escada. Se você topar, levamos duas lanternas, um pouco de pão e aquele café "
    "forte da dona Amélia. Quem sabe a gente descobre o que está acontecendo antes "
    "que o próximo barco chegue?"
)
JSON_TEXT = '{"altura_m": 330, "cidade": "Paris", "visitada_em": "2024-05-01"}'
SCHEMA = {
    "type": "object",
    "properties": {
        "altura_m": {"type": "number"},
        "cidade": {"type": "string"},
        "visitada_em": {"type": "string", "format": "date"},
    },
    "required": ["altura_m", "cidade"],
    "additionalProperties": False,
}


def median_ms(action: Callable[[], object], iterations: int) -> float:
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    started = time.perf_counter()
    warm_up()
    print(f"warm_up: {time.perf_counter() - started:.2f} s")
    reply = Reply(
        content=REPLY_TEXT,
        finish_reason="stop",
        completion_tokens=140,
        max_tokens=400,
        ttft_ms=420.0,
        total_ms=2100.0,
    )
    structured = Reply(content=JSON_TEXT, completion_tokens=20, max_tokens=200)

    def all_prose_checks() -> None:
        judge_ttft(reply, 10_000)
        judge_refusal(reply, "pt")
        judge_language(reply, "pt")
        judge_corruption(reply)
        leading_signature(reply.content)

    for _ in range(20):  # settle caches (compiled validators, lingua's first calls)
        all_prose_checks()
        judge_structured(structured, SCHEMA)
    prose = median_ms(all_prose_checks, iterations)
    json_ms = median_ms(lambda: judge_structured(structured, SCHEMA), iterations)
    print(f"reply: {len(REPLY_TEXT)} characters, {iterations} iterations")
    print(f"all prose checks (ttft, refusal, language, corruption, leading): median {prose:.2f} ms")
    print(f"structured output check (3-key object): median {json_ms:.3f} ms")
    print("target: under 10 ms per reply:", "met" if prose + json_ms < 10 else "MISSED")


if __name__ == "__main__":
    main()
