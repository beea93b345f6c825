"""Database connection hygiene for long network waits, and the bulk writes of a round
(one INSERT of new rows, one UPDATE of some columns of saved rows)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, TypeVar
from uuid import UUID

import orjson
from django.db import connection
from django.db.models import CharField, Field, Model, TextField

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

    On PostgreSQL an ``UPDATE … FROM jsonb_populate_recordset(…)`` of the primary keys and
    those columns only, the rows sent as one JSON parameter (``_recordset``). The upsert it
    replaced (bulk_create with ``update_conflicts`` on the primary key) sent every column
    of every row, JSON evidence included, to change two or three of them: most of a
    round's finalisation CPU under cProfile. Elsewhere (the demo's SQLite), or for values
    JSON cannot carry, that upsert. Rows that no longer exist are skipped.
    """
    if not rows:
        return
    model = type(rows[0])
    meta = model._meta
    columns = [_column(model, name) for name in fields]
    pk = _column(model, meta.pk.name)
    document = _recordset(rows, [pk, *columns]) if connection.vendor == "postgresql" else None
    if document is None:
        model._default_manager.bulk_create(rows, update_conflicts=True, unique_fields=[meta.pk.name], update_fields=list(fields))
        return
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    sets = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in columns)
    sql = (
        f"UPDATE {table} AS t SET {sets} "  # noqa: S608 - names come from the model
        f"FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) AS v WHERE t.{quote(pk.column)} = v.{quote(pk.column)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [document])


def rows_insert(rows: Sequence[Model], *, unique_fields: Sequence[str] = (), update_fields: Sequence[str] = ()) -> None:
    """Insert ``rows`` (new instances of one model, primary keys left unset on them) in
    one statement; a row that conflicts with a stored one is skipped, or, with
    ``unique_fields`` and ``update_fields``, writes those fields onto it (an upsert).

    On PostgreSQL an ``INSERT … SELECT … FROM jsonb_populate_recordset(…) ON CONFLICT …``
    of every column but the auto primary key, the rows sent as one JSON parameter
    (``_recordset``). Why not ``bulk_create``: Django 5.2 sends several rows as UNNEST of
    one array per column, and psycopg builds each array literal in Python; as VALUES,
    psycopg re-parses a statement of over 50 parameters on every call. Side by side on
    the scale bench's rows (2026-12-02), CPU per insert: 4 rows 1.3-1.9 ms as VALUES,
    0.8-0.9 ms as one JSON parameter; 30 rows 6-11 ms against 1.5-2.1 ms. Elsewhere (the
    demo's SQLite), or for values JSON cannot carry, ``bulk_create`` with the same
    conflict handling. Raises ``ValueError`` for ``update_fields`` without
    ``unique_fields``, and the database's errors.
    """
    if not rows:
        return
    if update_fields and not unique_fields:
        raise ValueError("an upsert needs the unique fields its conflict is on")
    model = type(rows[0])
    meta = model._meta
    fields = [f for f in meta.concrete_fields if f is not meta.auto_field]
    document = _recordset(rows, fields, adding=True) if connection.vendor == "postgresql" else None
    if document is None:
        if update_fields:
            model._default_manager.bulk_create(rows, update_conflicts=True, unique_fields=list(unique_fields),
                                               update_fields=list(update_fields))
        else:
            model._default_manager.bulk_create(rows, ignore_conflicts=True)
        return
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    names = ", ".join(quote(f.column) for f in fields)
    if update_fields:
        target = ", ".join(quote(_column(model, name).column) for name in unique_fields)
        sets = ", ".join(f"{quote(c)} = EXCLUDED.{quote(c)}" for c in (_column(model, name).column for name in update_fields))
        conflict = f"ON CONFLICT ({target}) DO UPDATE SET {sets}"
    else:
        conflict = "ON CONFLICT DO NOTHING"
    sql = (
        f"INSERT INTO {table} ({names}) SELECT {names} "  # noqa: S608 - names come from the model
        f"FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) {conflict}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [document])


# PostgreSQL's spellings of the floats JSON has no number for (float8 input, case-insensitive).
_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def _recordset(rows: Sequence[Model], fields: Sequence[Field[Any, Any]], *, adding: bool = False) -> str | None:
    """``rows``' values of ``fields`` as a JSON array of objects keyed by column, which
    ``jsonb_populate_recordset`` turns back into the table's row type (each scalar through
    its column type's text input: PostgreSQL docs, "JSON Processing Functions"). A JSON
    column's value is nested as it is; a SQL NULL is JSON null (which that function reads
    as NULL, for a JSON column too, as Django stores None). Datetimes go as ISO 8601 with
    their offset, decimals as their exact text, non-finite floats by name. None when a
    value has no such form (an integer past 64 bits, a string with a lone surrogate):
    the caller falls back to Django's statement."""
    records = []
    for row in rows:
        record: dict[str, Any] = {}
        for f in fields:
            value = f.get_prep_value(f.pre_save(row, adding) if adding else getattr(row, f.attname))
            if isinstance(value, float) and not math.isfinite(value):
                value = _NON_FINITE.get(value, "NaN")
            record[f.column] = value
        records.append(record)
    try:
        return orjson.dumps(records, default=_json_scalar).decode()
    except orjson.JSONEncodeError:
        return None


def _json_scalar(value: Any) -> str:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal | UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} has no JSON form")


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
