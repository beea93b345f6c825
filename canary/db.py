"""Database connection hygiene for long network waits, and the bulk writes of a round
(one INSERT of new rows, one UPDATE of some columns of saved rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connection
from django.db.models import CharField, Field, JSONField, Model, TextField

from core.text import storable

M = TypeVar("M", bound=Model)


def connection_release() -> None:
    """Hand this thread's database connection back to the pool before a long wait on the
    network (a probe: seconds), so a worker's many task threads share a small pool.

    Only with PostgreSQL's connection pool on (``DATABASE_POOL``) and outside a
    transaction; otherwise a no-op, because closing an unpooled connection would cost a
    new PostgreSQL backend on the next query.
    """
    if connection.settings_dict.get("OPTIONS", {}).get("pool") and not connection.in_atomic_block:
        connection.close()


def rows_update(rows: Sequence[Model], fields: Sequence[str]) -> None:
    """Write ``fields`` of ``rows`` (saved instances of one model) in one statement.

    On PostgreSQL an ``UPDATE … FROM unnest(…)`` of the primary keys and those columns
    only, each array cast to its column's type. The upsert it replaces (bulk_create with
    ``update_conflicts`` on the primary key) sent every column of every row, JSON evidence
    included, to change two or three of them: most of a round's finalisation CPU under
    cProfile. Elsewhere (the demo's SQLite), or for a JSON column (an array of jsonb would
    need its own adaptation), that upsert. Rows that no longer exist are skipped.
    """
    if not rows:
        return
    model = type(rows[0])
    meta = model._meta
    columns = [_column(model, name) for name in fields]
    if connection.vendor != "postgresql" or any(isinstance(f, JSONField) for f in columns):
        model._default_manager.bulk_create(rows, update_conflicts=True, unique_fields=[meta.pk.name], update_fields=list(fields))
        return
    quote = connection.ops.quote_name
    every = [_column(model, meta.pk.name), *columns]
    sets = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in columns)
    arrays = ", ".join(f"%s::{f.db_type(connection)}[]" for f in every)
    names = ", ".join(quote(f.column) for f in every)
    pk = quote(meta.pk.column)
    sql = (
        f"UPDATE {quote(meta.db_table)} AS t SET {sets} "  # noqa: S608 - names and types come from the model
        f"FROM unnest({arrays}) AS v({names}) WHERE t.{pk} = v.{pk}"
    )
    params = [[f.get_db_prep_save(getattr(row, f.attname), connection) for row in rows] for f in every]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def rows_insert(rows: Sequence[Model], *, unique_fields: Sequence[str] = (), update_fields: Sequence[str] = ()) -> None:
    """Insert ``rows`` (new instances of one model, primary keys left unset on them) in
    one statement; a row that conflicts with a stored one is skipped, or, with
    ``unique_fields`` and ``update_fields``, writes those fields onto it (an upsert).

    On PostgreSQL an ``INSERT … VALUES (…), (…) ON CONFLICT …`` of every column but the
    auto primary key. Why not ``bulk_create``: Django 5.2 sends several rows as UNNEST of
    one array per column, and psycopg builds each array literal in Python: a probe's
    4-row insert cost ~2.0-2.4 ms of CPU that way against ~0.8-1.0 ms as VALUES
    (2026-12-02, side by side on the scale bench's rows). Elsewhere (the demo's SQLite)
    ``bulk_create`` with the same conflict handling. Raises ``ValueError`` for
    ``update_fields`` without ``unique_fields``, and the database's errors.
    """
    if not rows:
        return
    if update_fields and not unique_fields:
        raise ValueError("an upsert needs the unique fields its conflict is on")
    model = type(rows[0])
    meta = model._meta
    if connection.vendor != "postgresql":
        if update_fields:
            model._default_manager.bulk_create(rows, update_conflicts=True, unique_fields=list(unique_fields),
                                               update_fields=list(update_fields))
        else:
            model._default_manager.bulk_create(rows, ignore_conflicts=True)
        return
    quote = connection.ops.quote_name
    fields = [f for f in meta.concrete_fields if f is not meta.auto_field]
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    if update_fields:
        target = ", ".join(quote(_column(model, name).column) for name in unique_fields)
        sets = ", ".join(f"{quote(c)} = EXCLUDED.{quote(c)}" for c in (_column(model, name).column for name in update_fields))
        conflict = f"ON CONFLICT ({target}) DO UPDATE SET {sets}"
    else:
        conflict = "ON CONFLICT DO NOTHING"
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "  # noqa: S608 - names come from the model
        f"VALUES {', '.join([one] * len(rows))} {conflict}"
    )
    params = [f.get_db_prep_save(f.pre_save(row, True), connection) for row in rows for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _column(model: type[Model], name: str) -> Field[Any, Any]:
    """The concrete field ``name`` of ``model``; ValueError for a relation's reverse side
    or anything else without a column of its own."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or not field.concrete:
        raise ValueError(f"{model.__name__}.{name} has no column of its own")
    return field


def text_fields_fit(instance: M) -> M:
    """``instance`` with every string of its text columns made storable (NUL and lone
    surrogates replaced, ``core.text.storable``) and cut to its column's ``max_length``,
    in place; returns it. A provider's reply chooses these strings (its ``provider``
    name, finish reason, generation id, text): a NUL or a 300-character provider name
    must be a verdict, not a DataError that leaves the round running."""
    for field in instance._meta.concrete_fields:
        if not isinstance(field, CharField | TextField):
            continue
        value = getattr(instance, field.attname)
        if isinstance(value, str):
            value = storable(value)
            if field.max_length is not None and len(value) > field.max_length:
                value = value[: field.max_length]
            setattr(instance, field.attname, value)
    return instance
