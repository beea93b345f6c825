"""The door's request checks on real text: how many well-formed requests built from real
replies they refuse (each refusal is a false one: the texts are ordinary replies).

Usage: ``.venv/bin/python bench/request_values_real_text.py``. Every text of
``tests/fixtures/real-text/*.jsonl`` (third-party, never read when the rules were
written) goes through ``request_fields_check``, ``body_check`` and
``request_values_check`` in three shapes: a user turn; an assistant turn between two user
turns; a user text part with two stop sequences and a seed. Then each reply message of
``tests/fixtures/captures/chat-*.json`` is sent back as the SDK would, followed by its
tool results or a user turn. Prints the counts and the first refusals.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routing.request_check import BodyInvalid, body_check  # noqa: E402
from routing.request_fields import request_fields_check  # noqa: E402
from routing.request_values import request_values_check  # noqa: E402


def checked(body: dict[str, Any]) -> None:
    """The edge's checks in the gateway's order (``chat_completion_create``)."""
    request_fields_check(body)
    body_check(body)
    request_values_check(body)


def shapes(text: str) -> list[dict[str, Any]]:
    return [
        {"messages": [{"role": "user", "content": text}]},
        {"messages": [{"role": "user", "content": "Go on."}, {"role": "assistant", "content": text},
                      {"role": "user", "content": "And then?"}]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}], "stop": ["\n\n", "User:"], "seed": 7},
    ]


def main() -> None:
    refused: Counter[str] = Counter()
    examples: list[str] = []
    total = 0
    bodies: list[tuple[str, dict[str, Any]]] = []
    for path in sorted((ROOT / "tests/fixtures/real-text").glob("*.jsonl")):
        for number, line in enumerate(filter(None, path.read_text().split("\n")), start=1):
            bodies += [(f"{path.name}:{number}", b) for b in shapes(json.loads(line)["text"])]
    for path in sorted((ROOT / "tests/fixtures/captures").glob("chat-*.json")):
        reply = json.loads(path.read_text())
        for choice in reply.get("choices", []) if isinstance(reply, dict) else []:
            message = choice["message"]
            results = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in message.get("tool_calls") or []]
            bodies.append((path.name, {"messages": [{"role": "user", "content": "hi"}, message,
                                                     *(results or [{"role": "user", "content": "And then?"}])]}))
    for where, body in bodies:
        total += 1
        try:
            checked(body)
        except BodyInvalid as exc:
            refused[exc.path] += 1
            examples.append(f"  {where}: {exc}"[:160])
    print(f"{total} requests, {sum(refused.values())} refused {dict(refused)}")
    print("\n".join(examples[:10]))


if __name__ == "__main__":
    main()
