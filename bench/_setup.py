"""Shared set-up of the bench scripts: Django on a throwaway database, the simulator."""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Benches run the production settings (DEBUG off) over plain HTTP on loopback: a secret
# of this run only, no HTTPS redirect. Servers a bench starts inherit both.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-run-" + secrets.token_urlsafe(48))
os.environ.setdefault("DJANGO_HTTPS", "false")


def django_on(database_url: str | None = None, *, migrate: bool = True) -> None:
    """Set Django up on ``database_url`` (default: a fresh SQLite file) and migrate
    (unless ``migrate`` is False: the caller migrates once its arguments are parsed)."""
    if database_url is None:
        database_url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.sqlite3'}"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def fresh_postgres(name: str) -> str:
    """Drop and create database ``name`` on the local PostgreSQL; returns its URL."""
    import psycopg

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgres://postgres@127.0.0.1:5432/{name}"


def simulator(fleet: dict | Path):  # type: ignore[no-untyped-def]
    """Start the simulator on a fleet (dict or path); returns (process, base_url)."""
    from fake_openrouter.process import free_port, start_simulator

    if isinstance(fleet, dict):
        path = Path(tempfile.mkdtemp()) / "fleet.json"
        path.write_text(json.dumps(fleet))
    else:
        path = fleet
    port = free_port()
    return start_simulator(path, port), f"http://127.0.0.1:{port}/api/v1"
