"""Content-codings of a reply body, decoded in bounded steps (RFC 9110 section 8.4).

Why not httpx's decoders: they inflate each network read whole, so one 64 KiB read of a
gzip bomb becomes ~64 MiB in memory before any size cap can look at it. Here each read
is inflated at most ``STEP_BYTES`` at a time (zlib's ``max_length``), and the caller's
cap (``openrouter.transport.GuardedBody``, ``join_capped``) sees every step, so a reply
is refused at its cap having held about that much.

Offered codings: ``ACCEPT_ENCODING`` (gzip and deflate), sent by every client of
``openrouter``; a reply in any other coding is ``UndecodableError``.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Final

import httpx

ACCEPT_ENCODING: Final = "gzip, deflate"
STEP_BYTES: Final = 64 * 1024


class UndecodableError(ValueError):
    """A body in a coding we did not offer, or bytes that do not inflate."""


class Decoder:
    """Decodes one body's content-codings as its bytes arrive.

    ``coding`` is the ``Content-Encoding`` header value (None: identity). ``feed(data)``
    yields the decoded pieces, none over ``STEP_BYTES``; ``end()`` checks the body ended
    whole (a truncated gzip stream is an error). Raises ``UndecodableError``.
    """

    def __init__(self, coding: str | None) -> None:
        codings = [c.strip().lower() for c in (coding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1:
            raise UndecodableError(f"content-codings {coding!r} stacked: only one of gzip or deflate is offered")
        self.coding = codings[0] if codings else None
        if self.coding in ("gzip", "x-gzip"):
            self._wbits = 16 + zlib.MAX_WBITS
        elif self.coding == "deflate":
            self._wbits = zlib.MAX_WBITS  # zlib-wrapped; raw deflate is tried when that fails
        elif self.coding is not None:
            raise UndecodableError(f"content-coding {self.coding!r} is not supported")
        self._zlib = zlib.decompressobj(self._wbits) if self.coding else None
        self._started = False
        self._in_member = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._zlib is None:
            if data:
                yield data
            return
        while data:
            try:
                out = self._zlib.decompress(data, STEP_BYTES)
            except zlib.error as exc:
                if self.coding == "deflate" and not self._started:
                    self._wbits = -zlib.MAX_WBITS  # servers that send raw deflate
                    self._zlib = zlib.decompressobj(self._wbits)
                    self._started = True
                    continue
                raise UndecodableError(f"undecodable {self.coding} body: {exc}") from None
            self._started = self._in_member = True
            if out:
                yield out
            if self._zlib.eof:
                # A gzip body may hold several members, one after another.
                data = self._zlib.unused_data
                self._zlib = zlib.decompressobj(self._wbits)
                self._in_member = False
                if not data.strip(b"\0"):
                    return
                continue
            data = self._zlib.unconsumed_tail

    def end(self) -> None:
        """The body ended: raises ``UndecodableError`` when it stopped inside a member."""
        if self._in_member:
            raise UndecodableError(f"{self.coding} body ended mid-stream")


def decoded(response: httpx.Response) -> Iterator[bytes]:
    """``response``'s body read raw and decoded in bounded steps; raises
    ``UndecodableError`` and httpx's errors."""
    decoder = Decoder(response.headers.get("content-encoding"))
    for raw in response.iter_raw():
        yield from decoder.feed(raw)
    decoder.end()


async def adecoded(coding: str | None, raw: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``decoded`` for a body read asynchronously: ``raw`` is its bytes as they arrive
    (transfer coding undone), ``coding`` its ``Content-Encoding`` header (None:
    identity). Raises ``UndecodableError`` and the reader's errors."""
    decoder = Decoder(coding)
    async for data in raw:
        for piece in decoder.feed(data):
            yield piece
    decoder.end()
