"""The beat's scheduler: django-celery-beat's ``DatabaseScheduler`` that will not start on
a database it cannot use.

On a database that is unreachable or not migrated the stock scheduler dies with several
tracebacks (and in a compose deployment that races ``migrate`` it may never run a round).
This one ends ``celery beat`` the way ``manage.py`` ends a command: one line on stderr
(``error: ...``, the same wording) and exit status 1. ``CELERY_BEAT_SCHEDULER`` names it.
"""

from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django_celery_beat.models import (
    ClockedSchedule,
    CrontabSchedule,
    IntervalSchedule,
    PeriodicTask,
    PeriodicTasks,
)
from django_celery_beat.schedulers import DatabaseScheduler

from reverie_ops.database import connection_problem, not_migrated_message

BEAT_MODELS = (PeriodicTask, PeriodicTasks, CrontabSchedule, IntervalSchedule, ClockedSchedule)


def beat_database_problem(config: dict[str, Any], conn: BaseDatabaseWrapper) -> str | None:
    """Why beat cannot use the database, in one line, or None.

    ``config`` is a ``DATABASES`` entry (checked with one direct connection, as
    ``manage.py`` does), ``conn`` the connection whose tables are listed: every table of
    django-celery-beat's models must exist (they come with ``manage.py migrate``).
    """
    problem = connection_problem(config)
    if problem:
        return problem
    tables = set(conn.introspection.table_names())
    for model in BEAT_MODELS:
        if model._meta.db_table not in tables:
            return not_migrated_message(model._meta.db_table)
    return None


class CheckedDatabaseScheduler(DatabaseScheduler):
    """``DatabaseScheduler`` after ``beat_database_problem`` found nothing; otherwise
    writes ``error: <problem>`` on stderr and raises ``SystemExit(1)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        problem = beat_database_problem(settings.DATABASES["default"], connection)
        if problem:
            sys.stderr.write(f"error: {problem}\n")
            raise SystemExit(1)
        super().__init__(*args, **kwargs)
