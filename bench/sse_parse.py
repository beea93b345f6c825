"""SSE parsing cost per MB for one huge line, and for an ordinary token stream.

Usage: ``.venv/bin/python bench/sse_parse.py``. Side by side in one run:

- one line of 4 MB and of 32 MB, fed in 64 KiB chunks (what httpx hands over), through
  ``openrouter.sse.SSEFrames``: linear time means the same CPU per MB for both
  (target: ratio under 1.5; re-joining the partial line on every chunk made it grow with
  the line's length, a 200 MB line cost seconds);
- a 20,000-token chat stream through the gateway's ``ChatStream``, in microseconds per
  token, to watch the per-chunk path the gateway's throughput depends on.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openrouter.sse import SSEFrames  # noqa: E402
from routing.stream import ChatStream  # noqa: E402

CHUNK = 64 * 1024


def huge_line_cpu_s(size: int) -> float:
    frames = SSEFrames(max_line_bytes=size + 16)
    piece = b"x" * CHUNK
    start = time.process_time()
    frames.feed(b"data: ")
    for _ in range(size // CHUNK):
        frames.feed(piece)
    frames.feed(b"\n\n")
    return time.process_time() - start


def token_stream_us_per_token(tokens: int) -> float:
    frame = b'data: {"choices":[{"index":0,"delta":{"content":"word "}}]}\n\n'
    body = b"".join([frame] * tokens) + b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    chunks = [body[i : i + 1500] for i in range(0, len(body), 1500)]  # a few frames per read
    start = time.process_time()
    stream = ChatStream()
    for chunk in chunks:
        stream.feed(chunk)
    stream.feed_end()
    assert stream.finish_reason == "stop"
    return (time.process_time() - start) / tokens * 1e6


def main() -> None:
    small, large = 4 * 1024 * 1024, 32 * 1024 * 1024
    small_s, large_s = huge_line_cpu_s(small), huge_line_cpu_s(large)
    per_mb_small, per_mb_large = small_s / 4, large_s / 32
    ratio = per_mb_large / per_mb_small if per_mb_small else float("nan")
    print(f"one 4 MB line:  {small_s * 1000:.1f} ms CPU ({per_mb_small * 1000:.2f} ms/MB)")
    print(f"one 32 MB line: {large_s * 1000:.1f} ms CPU ({per_mb_large * 1000:.2f} ms/MB)")
    print(f"cost per MB, 32 MB / 4 MB: {ratio:.2f} (target < 1.5: linear)")
    print(f"token stream: {token_stream_us_per_token(20_000):.2f} us CPU per token (gateway ChatStream)")


if __name__ == "__main__":
    main()
