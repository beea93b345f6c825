"""A command that cannot run says why in one line on stderr (exit 1), fast: a malformed
DATABASE_URL, a PostgreSQL database that does not exist, a database never migrated."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.compose import ROOT

MODEL = "meta-llama/llama-3.3-70b-instruct"


def _run(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgres//postgres@127.0.0.1/x", "not a PostgreSQL or SQLite URL"),
        ("mysql://u@h/db", "scheme 'mysql'"),
        ("postgres://u:secret@127.0.0.1:notaport/db", "DATABASE_URL is malformed"),
        ("postgres://u:secret@127.0.0.1:5432", "names no database"),
    ],
)
def test_a_malformed_database_url_is_one_line_naming_it(url: str, says: str):
    line = _one_line_error(_run(url, "ignore_list", "--model", MODEL))
    assert says in line and "secret" not in line


def test_a_postgresql_database_that_does_not_exist_is_one_line_not_a_pool_timeout():
    line = _one_line_error(_run("postgres://postgres@127.0.0.1:5432/reverie_ops_no_such_db", "ignore_list", "--model", MODEL))
    assert 'database "reverie_ops_no_such_db" does not exist' in line
    assert "createdb" in line


def test_postgresql_not_listening_is_one_line():
    from fake_openrouter.process import free_port

    line = _one_line_error(_run(f"postgres://postgres@127.0.0.1:{free_port()}/x", "ignore_list", "--model", MODEL))
    assert "refused" in line and "is PostgreSQL running" in line


def test_an_unmigrated_database_says_run_migrate(tmp_path: Path):
    line = _one_line_error(_run(f"sqlite:///{tmp_path / 'empty.sqlite3'}", "ignore_list", "--model", MODEL))
    assert "not migrated" in line and "manage.py migrate" in line


def test_an_unmigrated_postgresql_database_says_run_migrate():
    import psycopg

    name = "reverie_ops_e_unmigrated"
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        line = _one_line_error(_run(f"postgres://postgres@127.0.0.1:5432/{name}", "ignore_list", "--model", MODEL))
        assert "not migrated" in line and "manage.py migrate" in line
    finally:
        with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_celery_beat_on_an_unmigrated_database_is_the_same_one_line_error():
    import psycopg

    name = "reverie_ops_e_beat_unmigrated"
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}"}
        done = subprocess.run([sys.executable, "-m", "celery", "-A", "reverie_ops", "beat", "-l", "info"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        line = _one_line_error(done)
        assert line == "error: the database is not migrated (table django_celery_beat_periodictask does not exist): run python manage.py migrate"
        command = _one_line_error(_run(env["DATABASE_URL"], "ignore_list", "--model", MODEL))
        shape = r"error: the database is not migrated \(table \w+ does not exist\): run python manage.py migrate"
        assert re.fullmatch(shape, command) and re.fullmatch(shape, line), (command, line)
    finally:
        with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_celery_beat_with_postgresql_not_listening_is_one_line():
    from fake_openrouter.process import free_port

    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/x"}
    done = subprocess.run([sys.executable, "-m", "celery", "-A", "reverie_ops", "beat", "-l", "info"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    line = _one_line_error(done)
    assert "refused" in line and "is PostgreSQL running" in line
