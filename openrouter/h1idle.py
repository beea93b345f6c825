"""The idle keep-alive connections of a connection pool, by origin: the bookkeeping the
gateway's blocking pool (``openrouter.http1.Pool``) and the probes' event-loop pool
(``openrouter.http1_loop.LoopPool``) share. It counts nothing and locks nothing: each pool
keeps its own count of open connections and its own lock (or loop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

C = TypeVar("C")
Origin = tuple[str, str, int]  # scheme, host, port


class IdleConnections(Generic[C]):
    """Idle connections per origin, each with the instant (s, the pool's clock) it went
    idle, newest last. ``close`` closes one connection."""

    def __init__(self, close: Callable[[C], None]) -> None:
        self._close = close
        self._by_origin: dict[Origin, list[tuple[C, float]]] = {}

    def put(self, origin: Origin, conn: C, now: float) -> None:
        """``conn`` went idle at ``now``."""
        self._by_origin.setdefault(origin, []).append((conn, now))

    def take(self, origin: Origin, fresh_after: float, usable: Callable[[C], bool]) -> tuple[C | None, int]:
        """The newest idle connection to ``origin`` that went idle after ``fresh_after``
        and is ``usable``, or None; and how many stale or unusable ones were closed on the
        way (the caller's open count drops by that many)."""
        idle = self._by_origin.get(origin)
        closed = 0
        while idle:
            conn, since = idle.pop()
            if since >= fresh_after and usable(conn):
                return conn, closed
            self._close(conn)
            closed += 1
        return None, closed

    def evict_oldest(self) -> bool:
        """Close the longest-idle connection of any origin (the pool is full and another
        origin needs the slot); False when none is idle."""
        oldest: Origin | None = None
        for origin, conns in self._by_origin.items():
            if conns and (oldest is None or conns[0][1] < self._by_origin[oldest][0][1]):
                oldest = origin
        if oldest is None:
            return False
        conn, _ = self._by_origin[oldest].pop(0)
        self._close(conn)
        return True

    def close_all(self) -> int:
        """Close every idle connection; returns how many."""
        conns = [conn for idle in self._by_origin.values() for conn, _ in idle]
        self._by_origin.clear()
        for conn in conns:
            self._close(conn)
        return len(conns)
