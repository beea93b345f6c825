"""Whether the SSE event still being received can become a chat chunk, judged on the bytes
in hand alone: never waiting for more.

A chat stream's every ``data`` is one JSON object (or ``[DONE]``). An event whose blank
line has not arrived may still be completed by later bytes, so it is only *broken* when no
bytes after it can make it one: it does not open with ``{``; a closing bracket does not
match its opener; bytes follow the object's end; a byte outside a string that no JSON text
holds there (a control character, a non-ASCII byte); a control character inside a string
(RFC 8259, section 7: they must be escaped), which includes the line feed by which the
event's ``data`` lines are joined (WHATWG HTML, "Server-sent events"), so a ``data`` line
that ended inside a string can never be mended. Anything else (numbers, ``true``, escapes)
is left to the JSON decoder when the event is dispatched. The gateway asks it before its
commit point (``routing.gateway.upstream.LiveAttempt.held_broken``): a failure already
received must not pass the commit point unseen.
"""

from __future__ import annotations

from typing import Final

from openrouter.values import excerpt

_DONE: Final = b"[DONE]"
# How much of the event's end a reason quotes (bytes): where a cut frame broke.
_TAIL_BYTES: Final = 160
_WHITESPACE: Final = frozenset(b" \t\r\n")
_CLOSERS: Final = {ord("}"): ord("{"), ord("]"): ord("[")}


def held_frame_fault(lines: list[bytes], partial: bytes) -> str | None:
    """Why the event in progress can never be a JSON object, or None while it still can.

    ``lines``: its complete ``data`` values; ``partial``: the line still arriving, as
    received (a ``data:`` line continues the event; any other line adds nothing to it).
    Shapes as ``openrouter.sse.SSEFrames.held`` returns them. The reason names the fault
    and quotes the event's end, where it broke (``openrouter.values.excerpt``).
    """
    values = list(lines)
    open_line = partial.startswith(b"data:")
    if open_line:
        value = partial[5:]
        values.append(value[1:] if value[:1] == b" " else value)
    if not values:
        return None
    data = b"\n".join(values)
    stripped = data.strip()
    if not stripped or _DONE.startswith(stripped):
        return None
    fault = _scan(data, line_open=open_line)
    if fault is None:
        return None
    tail = data[-_TAIL_BYTES:].decode("utf-8", errors="replace")
    return f"{fault}: ...{excerpt(tail)!r}" if len(data) > _TAIL_BYTES else f"{fault}: {excerpt(tail)!r}"


def _scan(data: bytes, *, line_open: bool) -> str | None:
    """The first fault no later byte can mend in ``data`` (the event's data so far), or
    None. ``line_open``: its last line may still grow (no newline yet)."""
    stack: list[int] = []
    started = closed = in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
            elif byte < 0x20:
                return "a raw control character inside a JSON string"
            continue
        if byte in _WHITESPACE:
            continue
        if closed:
            return "bytes after the end of the JSON object"
        if not started:
            if byte != 0x7B:  # {
                return "the data does not open a JSON object"
            started = True
            stack.append(byte)
            continue
        if byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):
            stack.append(byte)
        elif byte in _CLOSERS:
            if not stack or stack.pop() != _CLOSERS[byte]:
                return "a closing bracket that matches no opening one"
            closed = not stack
        elif byte < 0x20 or byte >= 0x7F:
            return "a byte no JSON text holds outside a string"
    if in_string and not line_open:
        return "a data line ended inside a JSON string"
    return None
