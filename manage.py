#!/usr/bin/env python
"""Django's command-line utility for administrative tasks.

A configuration the commands cannot run with (a weak secret, a malformed DATABASE_URL, an
unreachable or missing PostgreSQL database, an unmigrated database) ends the command with
one line on stderr saying what is wrong, and exit status 1, instead of a traceback. Help
(``manage.py``, ``help [cmd]``, ``<cmd> --help``; ``reverie_ops.secret_key.help_invocation``)
needs neither a secret nor a database.
"""

import os
import sys

# Commands that never open the database: no connection check before them.
NO_DATABASE_COMMANDS = frozenset(
    {"help", "version", "--help", "-h", "--version", "check", "shell", "diffsettings", "collectstatic",
     "makemigrations", "sqlmigrate", "fake_openrouter", "startapp", "startproject", "compilemessages"}
)


def fail(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    sys.exit(1)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db import OperationalError, ProgrammingError

    try:
        database = settings.DATABASES["default"]
    except ImproperlyConfigured as exc:
        fail(str(exc))
    from reverie_ops.database import connection_problem, missing_table, not_migrated_message
    from reverie_ops.secret_key import help_invocation

    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command not in NO_DATABASE_COMMANDS and not help_invocation(sys.argv):
        problem = connection_problem(database)
        if problem:
            fail(problem)
    try:
        execute_from_command_line(sys.argv)
    except (ProgrammingError, OperationalError) as exc:
        table = missing_table(exc)
        if table is None:
            raise
        fail(not_migrated_message(table))


if __name__ == "__main__":
    main()
