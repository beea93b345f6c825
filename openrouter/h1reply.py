"""One HTTP/1.1 response parsed from its bytes as they arrive, without I/O: the part of the
wire that the gateway's blocking client (``openrouter.http1``, sockets in threads) and the
probes' event-loop client (``openrouter.http1_loop``, asyncio) share, so both read the
same bytes the same way.

Parsing is httptools' (Python bindings of llhttp, Node.js's HTTP parser, in C). Framing
and codings follow RFC 9112 ("HTTP/1.1": chunked, ``Content-Length`` or the closing of the
connection, section 6.3; interim 1xx responses skipped) and RFC 9110 (content-codings
``gzip`` and ``deflate``, decoded in bounded steps so that a caller's byte cap is checked
as a body inflates).

Errors: ``WireError`` and its three kinds, which both clients raise: ``SendFailed`` (nothing
was sent), ``TimedOut``, ``ConnectionLost`` (the connection closed or reset, or the reply is
not HTTP/1.1, after sending began; ``InvalidReply`` and ``UndecodableBody`` say which bytes
were wrong).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Final

import httptools

MAX_HEADER_BYTES: Final = 64 * 1024  # a reply's status line and headers; OpenRouter sends ~1 KiB
INFLATE_STEP: Final = 64 * 1024  # decoded bytes per zlib step: the caller's cap is checked between steps


class WireError(Exception):
    """A request that could not be completed; ``str(exc)`` says why, for a person."""


class SendFailed(WireError):
    """Nothing was sent: the URL, the name lookup, the connection, TLS or the pool failed."""


class TimedOut(WireError):
    """A read or write waited past its timeout."""


class ConnectionLost(WireError):
    """The connection closed or reset, or the reply was not HTTP/1.1, after sending began."""


class InvalidReply(ConnectionLost):
    """The bytes received are not an HTTP/1.1 response (a bad status line, chunk size or
    header; a head over ``MAX_HEADER_BYTES``; a protocol switch)."""


class UndecodableBody(ConnectionLost):
    """The body's content-coding does not decode (corrupt or truncated gzip or deflate)."""


class ReplyParser:
    """The state of one response: ``feed`` it the bytes read, in order.

    Read once ``head_done``: ``status`` (int), ``headers`` (lower-cased names; repeated
    fields joined with ", "). ``take_raw()`` hands over the body bytes parsed so far (still
    content-coded), ``decode`` and ``decode_end`` undo the content-coding; ``complete``
    once the message ended, ``keep`` when its connection may carry another request.
    ``feed`` and ``check_head`` raise ``InvalidReply``; the decoding raises
    ``UndecodableBody``; both are ``ConnectionLost``.
    """

    __slots__ = ("status", "headers", "head_done", "complete", "by_close", "head_bytes", "_field_bytes", "_parser", "_names", "_values",
                 "_body", "_decoder", "_coding", "_inflated", "_keep")

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.head_done = False
        self.complete = False
        self.by_close = False  # the body ends when the connection closes (no length, not chunked)
        self.head_bytes = 0  # bytes fed before the head was done
        self._field_bytes = 0  # the head's field lines as parsed
        self._parser = httptools.HttpResponseParser(self)
        self._names: list[str] = []
        self._values: list[str] = []
        self._body: list[bytes] = []
        self._decoder: zlib._Decompress | None = None
        self._coding = "identity"  # the content-coding, lower-cased, once the headers are in
        self._inflated = False
        self._keep = False

    @property
    def coded(self) -> bool:
        """The body has a content-coding to undo (once ``check_head`` ran)."""
        return self._coding not in ("identity", "")

    @property
    def keep(self) -> bool:
        """The message is complete and its connection may be reused."""
        return self.complete and self._keep

    def spoil(self) -> None:
        """Never reuse this connection (an error, or bytes nobody asked for)."""
        self._keep = False

    # httptools callbacks (bytes in, nothing out). llhttp parses on past the end of a
    # message: bytes after the final response are a second message nobody asked for, so
    # they are ignored and the connection is never reused.
    def on_message_begin(self) -> None:
        if self.complete:
            self._keep = False

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.complete:
            return
        self._field_bytes += len(name) + len(value) + 4  # ": " and CRLF
        self._names.append(name.decode("latin-1").lower())
        self._values.append(value.decode("latin-1"))

    def on_headers_complete(self) -> None:
        if self.complete:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim response: the final one follows
            self._names.clear()
            self._values.clear()
            return
        self.status = status
        headers: dict[str, str] = {}
        for name, value in zip(self._names, self._values, strict=True):
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.headers = headers
        self.head_done = True
        self.by_close = "content-length" not in headers and "chunked" not in headers.get("transfer-encoding", "").lower()

    def on_body(self, body: bytes) -> None:
        if not self.complete:
            self._body.append(body)

    def on_message_complete(self) -> None:
        if self.head_done and not self.complete:
            self.complete = True
            # Asked here: llhttp resets the flags behind it once the callback returns.
            self._keep = self._parser.should_keep_alive()

    def feed(self, data: bytes) -> None:
        """Parse ``data``; raises ``ConnectionLost`` for bytes that are not HTTP/1.1 (or a
        head over ``MAX_HEADER_BYTES``). Bytes after a complete reply are ignored, and the
        connection is then never reused."""
        if self.complete:  # stray bytes after the reply (a close-delimited one ended at EOF)
            self._keep = False
            return
        if not self.head_done:
            self.head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            raise InvalidReply("the server switched protocols") from None
        except httptools.HttpParserError as exc:
            if self.complete:  # the reply was whole; what followed it is not HTTP
                self._keep = False
                return
            raise InvalidReply(f"the reply is not valid HTTP/1.1: {exc}") from None
        # An unfinished head is bounded by the bytes read for it; a head read whole in one
        # read, by its field lines (repeated names are joined later, which hides their size).
        if (not self.head_done and self.head_bytes > MAX_HEADER_BYTES) or self._field_bytes > MAX_HEADER_BYTES:
            raise InvalidReply(f"response headers over {MAX_HEADER_BYTES} bytes")

    def check_head(self) -> None:
        """Once ``head_done``: refuse what this client does not read (a head over
        ``MAX_HEADER_BYTES``, a transfer-coding other than chunked, a content-coding other
        than gzip, deflate or identity) with ``ConnectionLost``, and set up the decoder."""
        if sum(len(n) + len(v) for n, v in self.headers.items()) > MAX_HEADER_BYTES:
            raise InvalidReply(f"response headers over {MAX_HEADER_BYTES} bytes")
        transfer = [c.strip() for c in self.headers.get("transfer-encoding", "").lower().split(",") if c.strip()]
        if any(c not in ("chunked", "identity") for c in transfer):
            raise InvalidReply(f"transfer-coding {self.headers['transfer-encoding'][:40]!r} is not supported")
        coding = self._coding = self.headers.get("content-encoding", "identity").strip().lower()
        if coding == "gzip":
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            self._decoder = zlib.decompressobj()
        elif coding not in ("identity", ""):
            raise UndecodableBody(f"content-coding {coding[:40]!r} is not supported")

    def take_raw(self) -> bytes:
        """The body bytes parsed since the last call, still content-coded (b"" for none)."""
        body = self._body
        if not body:
            return b""
        raw = body[0] if len(body) == 1 else b"".join(body)
        body.clear()
        return raw

    def end_of_input(self) -> None:
        """The connection closed (EOF): the end of a close-delimited body, else
        ``ConnectionLost``."""
        if self.complete:
            return
        if self.head_done and self.by_close:
            self.complete = True  # the connection is not kept: _keep stays False
            return
        raise ConnectionLost("the connection closed mid-body" if self.head_done else "the server closed the connection without a reply")

    def decode(self, raw: bytes) -> Iterator[bytes]:
        """``raw`` with its content-coding undone, in pieces of at most ``INFLATE_STEP``
        decoded bytes (pieces may be empty), each made only when the caller asks for it,
        so a cap checked between pieces stops a decompression bomb; raises
        ``UndecodableBody`` for a body that does not decode."""
        if self._decoder is None:
            yield raw
            return
        try:
            while True:
                decoder = self._decoder
                assert decoder is not None
                try:
                    out = decoder.decompress(raw, INFLATE_STEP)
                except zlib.error:
                    if self._inflated or self._coding != "deflate":
                        raise
                    # "deflate" sent as a raw DEFLATE stream, without its zlib wrapper (RFC
                    # 9110 section 8.4.1.2 notes that some servers do): decode it as that.
                    decoder = self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                    out = decoder.decompress(raw, INFLATE_STEP)
                self._inflated = True
                yield out
                while decoder.unconsumed_tail:
                    yield decoder.decompress(decoder.unconsumed_tail, INFLATE_STEP)
                if not (decoder.eof and decoder.unused_data):
                    return
                if self._coding != "gzip":
                    raise UndecodableBody("bytes after the end of the compressed body")
                # Another gzip member (RFC 1952 section 2.2: members are concatenated),
                # decoded in this loop, not by recursion: thousands of empty members
                # must not exhaust the stack.
                raw = decoder.unused_data
                self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        except zlib.error as exc:
            raise UndecodableBody(f"the body could not be decoded: {exc}") from None

    def decode_end(self) -> Iterator[bytes]:
        """The end of a complete body: what the decoder still holds; raises
        ``ConnectionLost`` for a compressed stream cut short."""
        decoder = self._decoder
        if decoder is None:
            return
        if tail := decoder.flush():
            yield tail
        if self._inflated and not decoder.eof:
            raise UndecodableBody("the compressed body ended before its end marker")


class ParsedReply:
    """What a response being read exposes of its ``ReplyParser`` (``_reply``): ``status``
    (int) and ``headers`` (lower-cased names), once its head is in."""

    __slots__ = ()
    _reply: ReplyParser

    @property
    def status(self) -> int:
        return self._reply.status

    @property
    def headers(self) -> dict[str, str]:
        return self._reply.headers

    @property
    def declared_length(self) -> int | None:
        """The body's length in bytes as its ``Content-Length`` declares it; None when
        absent, not a number, or the body is content-coded (what it inflates to is
        unknown until read)."""
        declared = self._reply.headers.get("content-length", "").strip()
        if not declared.isdigit() or self._reply.coded:
            return None
        return int(declared)
