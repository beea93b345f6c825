"""The database from ``DATABASE_URL``, and the one-line reasons it cannot be used.

Settings call ``database_config`` at start-up (a malformed URL is refused with a message,
not Django's ``KeyError: 'ENGINE'`` later); ``manage.py`` calls ``connection_problem``
before a command that needs the database (PostgreSQL's own reason at once, instead of a
connection pool retrying for its whole timeout) and ``missing_table`` to name an
unmigrated database.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import environ
import psycopg

ENGINES = ("django.db.backends.postgresql", "django.db.backends.sqlite3")
_EXAMPLE = "postgres://USER:PASSWORD@HOST:5432/NAME or sqlite:///PATH"
# How long the start-up check waits for PostgreSQL to answer (s; libpq's minimum is 2).
CHECK_CONNECT_TIMEOUT_S = 3
_MISSING_TABLE = re.compile(r'relation "([^"]+)" does not exist|no such table: (\S+)')


def database_config(env: environ.Env, default: str) -> dict[str, Any]:
    """Django's ``DATABASES["default"]`` from ``DATABASE_URL`` (``default`` when unset).

    Raises ImproperlyConfigured naming the problem (never echoing the URL: it may hold a
    password) when the URL does not parse or names an engine other than PostgreSQL or
    SQLite.
    """
    with warnings.catch_warnings():
        # django-environ only warns on an unknown scheme; the check below says it clearly.
        warnings.simplefilter("ignore", UserWarning)
        try:
            config = env.db_url("DATABASE_URL", default=default)
        except ValueError as exc:
            raise environ.ImproperlyConfigured(f"DATABASE_URL is malformed ({exc}); expected {_EXAMPLE}") from None
    engine = config.get("ENGINE")
    if engine not in ENGINES:
        url = env.str("DATABASE_URL", default="")
        scheme = f"scheme {url.partition('://')[0]!r}" if "://" in url else "no scheme://"
        raise environ.ImproperlyConfigured(f"DATABASE_URL is not a PostgreSQL or SQLite URL ({scheme}); expected {_EXAMPLE}")
    if engine == ENGINES[0] and not config.get("NAME"):
        raise environ.ImproperlyConfigured(f"DATABASE_URL names no database; expected {_EXAMPLE}")
    return config


def connection_problem(config: dict[str, Any]) -> str | None:
    """Why PostgreSQL refuses a connection for ``config`` (a ``DATABASES`` entry), in one
    line, or None when a connection opens (or the engine is not PostgreSQL).

    One direct connection, outside any pool, waiting at most ``CHECK_CONNECT_TIMEOUT_S``.
    """
    if config.get("ENGINE") != ENGINES[0]:
        return None
    host, port, name = config.get("HOST") or "localhost", config.get("PORT") or 5432, config["NAME"]
    options = {k: v for k, v in (config.get("OPTIONS") or {}).items() if k in ("sslmode", "sslrootcert", "sslcert", "sslkey", "options")}
    try:
        psycopg.connect(
            host=host, port=port, dbname=name, user=config.get("USER") or None, password=config.get("PASSWORD") or None,
            connect_timeout=CHECK_CONNECT_TIMEOUT_S, **options,
        ).close()
    except psycopg.OperationalError as exc:
        reason = _reason(str(exc))
        hint = ""
        if "does not exist" in reason and "database" in reason:
            hint = f": create it (createdb -h {host} -p {port} {name}) or fix DATABASE_URL"
        elif "refused" in reason or "timeout" in reason or "could not translate" in reason:
            hint = ": is PostgreSQL running there, and is DATABASE_URL right?"
        return f"cannot use the PostgreSQL database {name!r} at {host}:{port}: {reason}{hint}"
    return None


def missing_table(exc: BaseException) -> str | None:
    """The table an error says does not exist (PostgreSQL or SQLite wording), or None."""
    match = _MISSING_TABLE.search(str(exc))
    return (match.group(1) or match.group(2)) if match else None


def not_migrated_message(table: str) -> str:
    """The one line every entry point (``manage.py``, ``celery beat``) gives for a
    database without ``table``: it is not migrated, and the command that fixes it."""
    return f"the database is not migrated (table {table} does not exist): run python manage.py migrate"


def _reason(message: str) -> str:
    # libpq: 'connection failed: connection to server at "h" (ip), port p failed: FATAL:  database "x" does not exist'
    last = message.strip().splitlines()[0] if message.strip() else message
    for marker in ("FATAL:", "failed:"):
        if marker in last:
            last = last.rsplit(marker, 1)[1]
            break
    return " ".join(last.split()) or "connection failed"
