"""The service tokens' last uses written after the response (``core.tokens.last_use_flush``).

A token check that went to the database records its use in memory; this module writes it
once the request is over, on Django's ``request_finished`` (sent when the WSGI server
closes the response: after its last byte, a stream's included), so no request waits for
the write and its commit. Any request's end writes every use the process has pending,
so a use shows in the admin's "last used" when its own request ends or the next one in
the process does, whichever is first.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, close_old_connections, connection

from core.tokens import last_use_flush, last_use_pending

log = logging.getLogger(__name__)


def last_use_write() -> None:
    """Write the pending last uses (``last_use_flush``); a database error is logged at
    WARNING, never raised (the next check of each token records its use again)."""
    if not last_use_pending():
        return
    try:
        last_use_flush()
    except DatabaseError as exc:
        log.warning("service tokens: last use not written (%s: %s)", type(exc).__name__, exc)


def last_use_after_response(**_: Any) -> None:
    """``request_finished`` receiver: ``last_use_write``, then the connection it took
    handed back as Django's own receiver (connected before this one) hands back the
    request's: to the pool, or closed past ``CONN_MAX_AGE``. A connection inside a
    transaction is its owner's and stays as it is."""
    if not last_use_pending():
        return
    last_use_write()
    if not connection.in_atomic_block:
        close_old_connections()
