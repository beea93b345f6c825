"""Session limits by role (core/db_limits.py): which role a process takes, the libpq
options that carry the limits, and that a session really runs under them."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection, connections, transaction

from core.db_limits import (
    FINALISER_LIMITS,
    ROLE_LIMITS,
    SessionLimits,
    libpq_options,
    lock_timed_out,
    process_role,
)


@pytest.mark.parametrize(("argv", "role"), [
    (["/venv/bin/celery", "-A", "reverie_ops", "worker", "-P", "threads"], "worker"),
    (["/venv/lib/python3.11/site-packages/celery/__main__.py", "-A", "reverie_ops", "beat"], "worker"),
    (["manage.py", "migrate"], "command"),
    (["manage.py", "runserver"], "web"),
    (["/venv/bin/gunicorn", "reverie_ops.wsgi"], "web"),
    ([], "web"),
])
def test_the_role_follows_the_command_line(argv, role):
    assert process_role(argv) == role


def test_the_options_carry_every_limit_in_milliseconds_after_existing_ones():
    options = libpq_options(SessionLimits(statement_s=30, lock_s=2.5, idle_in_transaction_s=0), "-c search_path=x")
    assert options == ("-c search_path=x -c statement_timeout=30000 -c lock_timeout=2500 "
                       "-c idle_in_transaction_session_timeout=0")


def test_every_role_bounds_its_lock_waits_but_a_command_and_web_keep_no_idle_limit():
    assert ROLE_LIMITS["web"].lock_s > 0 and ROLE_LIMITS["worker"].lock_s > 0 and FINALISER_LIMITS.lock_s > 0
    assert ROLE_LIMITS["worker"].idle_in_transaction_s > 0
    assert ROLE_LIMITS["command"].statement_s == 0  # a migration may run long


@pytest.mark.django_db(transaction=True)
def test_this_session_runs_under_its_roles_limits_and_a_lock_wait_ends_at_the_lock_timeout(settings):
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone()[0] == f"{round(settings.DATABASE_LIMITS.lock_s * 1000)}ms".replace("000ms", "s")
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS db_limits_probe (id int)")
    other = connections.create_connection("default")
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("LOCK TABLE db_limits_probe IN ACCESS EXCLUSIVE MODE")
            other.set_autocommit(True)
            with other.cursor() as cursor:
                cursor.execute("SET lock_timeout = '200ms'")
                with pytest.raises(OperationalError) as caught:
                    cursor.execute("SELECT * FROM db_limits_probe")
        assert lock_timed_out(caught.value)
    finally:
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE db_limits_probe")
