"""When a request reached the simulator: the kernel's clock of its connection's last
bytes, not the moment its handler got a turn of the simulator's one event loop.

A canary round sends hundreds of requests at once. The simulator reads and plans them on
one loop, so the last of a burst starts its handler a turn or two after its bytes came
in (157 ms at the median in the scale bench, docs/benchmarks.md). A provider's time to
first token counts from the request's arrival; stamping it at the handler's start added
the simulator's own queue to every endpoint's drawn TTFT (docs/fleet-format.md,
``ttft_ms``: "waits this long before the first content token").

Linux keeps, per TCP connection, the time since data was last received
(``tcpi_last_data_recv`` of ``struct tcp_info``, ``getsockopt(TCP_INFO)``, tcp(7)); a
handler runs only once its request's head has been read, so that is the request's
arrival. Elsewhere (no ``TCP_INFO``) there is no such clock and the caller stamps the
handler's start.
"""

from __future__ import annotations

import asyncio
import socket
import struct

# ``struct tcp_info`` (linux/tcp.h): eight one-byte fields, then 32-bit fields of which
# ``tcpi_last_data_recv`` (ms) is the twelfth; the layout only ever grew at its end.
_LAST_DATA_RECV_OFFSET = 52
_TCP_INFO_READ = _LAST_DATA_RECV_OFFSET + 4
# An age beyond this is no request that just arrived (a clock fault): not used.
_MAX_AGE_S = 60.0


def request_arrival(transport: asyncio.BaseTransport | None, now: float) -> float | None:
    """The loop time (s, the clock of ``now``, the loop's ``time()``) when the connection
    of ``transport`` last received data, to the kernel's resolution (a few ms); None when
    the platform keeps no such clock or the socket is gone."""
    tcp_info = getattr(socket, "TCP_INFO", None)
    sock = transport.get_extra_info("socket") if transport is not None else None
    if tcp_info is None or sock is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, tcp_info, _TCP_INFO_READ)
    except OSError:
        return None
    if len(info) < _TCP_INFO_READ:
        return None
    (age_ms,) = struct.unpack_from("=I", info, _LAST_DATA_RECV_OFFSET)
    age_s = age_ms / 1000.0
    return now - age_s if age_s <= _MAX_AGE_S else None
