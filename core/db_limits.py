"""Lock and statement timeouts of database sessions, by role.

Nothing set them before: a finaliser frozen while it held its round's row lock made
every later finaliser wait for ever (16 sessions waiting after 165 s) and the next round
was never created. Each role now gets PostgreSQL's three limits (PostgreSQL docs,
"Client Connection Defaults": ``statement_timeout``, ``lock_timeout``,
``idle_in_transaction_session_timeout``):

- ``statement_timeout``: a statement running longer is cancelled;
- ``lock_timeout``: a statement waiting longer for a lock gives up (SQLSTATE 55P03), so
  waiters never pile up behind a lock holder that does not move;
- ``idle_in_transaction_session_timeout``: a session idle inside a transaction longer
  (its process frozen, or stuck between statements) is ended by PostgreSQL, which rolls
  its transaction back and frees its locks.

Roles: ``web`` (gunicorn: requests answer in seconds; no idle-in-transaction limit, as
requests run in autocommit), ``worker`` (Celery worker and beat), ``command``
(``manage.py`` commands such as ``migrate``: no statement limit), and ``finaliser``, a
transaction's limits set with ``SET LOCAL`` inside a worker session
(``transaction_limits_set``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class SessionLimits:
    """PostgreSQL timeouts in seconds; 0 turns one off."""

    statement_s: float
    lock_s: float
    idle_in_transaction_s: float


ROLE_LIMITS: dict[str, SessionLimits] = {
    "web": SessionLimits(statement_s=30, lock_s=5, idle_in_transaction_s=0),
    "worker": SessionLimits(statement_s=120, lock_s=10, idle_in_transaction_s=120),
    "command": SessionLimits(statement_s=0, lock_s=0, idle_in_transaction_s=0),
}
FINALISER_LIMITS = SessionLimits(statement_s=120, lock_s=5, idle_in_transaction_s=120)


def process_role(argv: Sequence[str]) -> str:
    """The role of the process started with ``argv``: ``worker`` for a Celery process
    (``celery ... worker`` or ``beat``), ``command`` for ``manage.py <command>`` other than
    ``runserver``, else ``web`` (gunicorn, uvicorn, a test run)."""
    program = os.path.basename(argv[0]) if argv else ""
    if program in ("celery", "__main__.py") and any(a in ("worker", "beat") for a in argv[1:]):
        return "worker"
    if program == "manage.py" and len(argv) > 1 and argv[1] != "runserver":
        return "command"
    return "web"


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def libpq_options(limits: SessionLimits, existing: str = "") -> str:
    """libpq's ``options`` connection parameter setting ``limits`` for every session
    (``-c statement_timeout=30000 -c lock_timeout=5000 ...``, milliseconds), after any
    ``existing`` options. Set at connection start-up: no extra round trip per checkout."""
    ours = (f"-c statement_timeout={_ms(limits.statement_s)} -c lock_timeout={_ms(limits.lock_s)} "
            f"-c idle_in_transaction_session_timeout={_ms(limits.idle_in_transaction_s)}")
    return f"{existing} {ours}".strip()


def transaction_limits_set(limits: SessionLimits) -> None:
    """``SET LOCAL`` the statement and lock timeouts of ``limits`` for the current
    transaction on the default connection (PostgreSQL only; a no-op on SQLite). Call it
    inside ``transaction.atomic()``; the session's own limits return at its end."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)",
            [f"{_ms(limits.statement_s)}ms", f"{_ms(limits.lock_s)}ms"],
        )


def lock_timed_out(exc: BaseException) -> bool:
    """True when ``exc`` (a Django ``OperationalError``, or the driver's error) is
    PostgreSQL's ``lock_not_available`` (SQLSTATE 55P03): ``lock_timeout`` ran out."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    return getattr(cause, "sqlstate", None) == "55P03"
