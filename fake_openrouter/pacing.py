"""The simulator's stream pacing, pure: which of a reply's planned writes leave together in
one send (``coalesced``, ``due_writes``, ``send_groups``), where a paced run of tokens ends
(``paced_run_end``) and the chunked-body framing of a send (``chunk_frame``, RFC 9112 7.1).
The server (``fake_openrouter.server``) plays the groups on its event loop."""

from __future__ import annotations

from fake_openrouter.world import Step, Wait, Write


def coalesced(steps: tuple[Step, ...]) -> list[Step]:
    """``steps`` with writes that follow one another without a wait joined into one write
    (marked ``first_token`` if any part was): the same bytes at the same instants in fewer
    sends (the head of a stream, its last frames and ``[DONE]``). A send on loopback is
    most of the simulator's CPU per streamed reply."""
    out: list[Step] = []
    for step in steps:
        last = out[-1] if out else None
        if isinstance(step, Write) and isinstance(last, Write):
            out[-1] = Write(last.data + step.data, first_token=last.first_token or step.first_token)
        else:
            out.append(step)
    return out


def due_writes(steps: list[Step], at: int, write: Write, due: float, now: float) -> tuple[Write, int, float]:
    """``write`` joined with the writes that follow it in ``steps`` (from index ``at``,
    each after one ``Wait``) whose instants on the schedule are already past at ``now``
    (``due``: the instant of ``write``, loop seconds). Returns the joined write (marked
    ``first_token`` if any part was), the index of the first step not taken and the
    instant of the last write taken. A simulator behind its schedule would send those
    bytes at this same instant one send each; one send costs it a fraction of the CPU
    and keeps it from falling further behind in a round's burst."""
    parts, first_token = [write.data], write.first_token
    while at + 1 < len(steps):
        wait, following = steps[at], steps[at + 1]
        if not (isinstance(wait, Wait) and isinstance(following, Write) and due + wait.seconds <= now):
            break
        due += wait.seconds
        parts.append(following.data)  # joined once below: a long reply far behind stays linear
        first_token = first_token or following.first_token
        at += 2
    if len(parts) == 1:
        return write, at, due
    return Write(b"".join(parts), first_token=first_token), at, due


def paced_run_end(steps: list[Step], at: int) -> int:
    """The index past the run of ``Wait``, ``Write`` pairs that starts at ``at`` in
    ``steps`` (``at`` itself when none does): a stream's tokens after its first."""
    end = at
    while end + 1 < len(steps) and isinstance(steps[end], Wait) and isinstance(steps[end + 1], Write):
        end += 2
    return end


# After a stream's first token, frames due less than this apart leave in one send (s), at
# the instant of the last of them: at the default 400 tokens/s, 8 frames a send instead
# of 1; at 50 tokens/s or slower, each frame alone. No frame leaves before its instant,
# the first token and the last frame leave exactly on time, and the stream's pace holds.
# Measured with bench/probe_cpu.py (600 probes, 3 runs each side, 2026-12-02): the
# simulator's CPU per reply 1.22-1.55 ms against 1.82-2.02 ms sending every frame alone.
SEND_QUANTUM_S = 0.02


def send_groups(sends: list[tuple[float, bytes]], quantum_s: float) -> list[tuple[float, bytes]]:
    """``sends`` ((instant in loop seconds, bytes), instants not decreasing) joined into
    groups, each spanning less than ``quantum_s`` from its first instant, and sent at its
    last write's instant: ``[(instant, joined bytes), ...]``, the same bytes in order."""
    out: list[tuple[float, bytes]] = []
    start: float | None = None
    parts: list[bytes] = []
    last = 0.0
    for instant, data in sends:
        if start is not None and instant - start >= quantum_s:
            out.append((last, b"".join(parts)))
            start, parts = None, []
        if start is None:
            start = instant
        parts.append(data)
        last = instant
    if parts:
        out.append((last, b"".join(parts)))
    return out


def chunk_frame(data: bytes) -> bytes:
    """``data`` as one chunk of HTTP/1.1's chunked transfer coding (RFC 9112, 7.1): its
    size in hex, CRLF, the bytes, CRLF; what aiohttp's writer sends for a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)
