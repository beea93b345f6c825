"""Production settings from the compose environment: Django's deployment check is clean,
and a weak secret is refused at start-up with a message saying what is wrong."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from reverie_ops.secret_key import help_invocation, secret_key_problem
from tests.deploy.compose import ROOT, process_environment


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


# Django's deployment-check ids of the HTTPS settings (docs.djangoproject.com, "System
# check framework", security): HSTS, SSL redirect, secure session and CSRF cookies.
HTTPS_CHECKS = {"security.W004", "security.W008", "security.W012", "security.W016"}


def test_check_deploy_with_the_compose_environment_and_tls_has_no_warnings():
    # docs/operations.md, "TLS": TLS at the proxy and DJANGO_HTTPS=true in .env.
    done = _manage(process_environment("web", DJANGO_HTTPS="true"), "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "System check identified no issues" in done.stdout
    assert "WARNINGS" not in done.stderr + done.stdout


def test_the_shipped_plain_http_environment_warns_only_about_https():
    done = _manage(process_environment("web"), "check", "--deploy")
    assert done.returncode == 0, done.stderr + done.stdout
    assert set(re.findall(r"\(security\.W\d+\)", done.stderr + done.stdout)) == {f"({c})" for c in HTTPS_CHECKS}


def test_the_shipped_environment_serves_plain_http_without_redirects():
    code = "from django.conf import settings as s; print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS)"
    done = _manage(process_environment("web"), "shell", "-v", "0", "-c", code)
    assert done.stdout.split() == ["None", "False", "False", "False", "0"], done.stderr


def test_with_tls_the_environment_serves_https_behind_the_proxy_header():
    env = process_environment("web", DJANGO_HTTPS="true")
    code = "from django.conf import settings as s; print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS)"
    done = _manage(env, "shell", "-v", "0", "-c", code)
    assert done.stdout.split() == ["('HTTP_X_FORWARDED_PROTO',", "'https')", "True", "True", "True", "31536000"], done.stderr


def test_with_tls_internal_callers_still_reach_health_and_metrics_over_plain_http():
    # Compose's health check and Prometheus fetch web:8000 directly, bypassing the TLS proxy.
    env = process_environment("web", DJANGO_HTTPS="true")
    code = ("from django.test import Client; c = Client(HTTP_HOST='web:8000'); "
            "print(*(c.get(p).status_code for p in ('/api/v1/health', '/metrics', '/admin/login/')))")
    done = _manage(env, "shell", "-v", "0", "-c", code)
    health, metrics, admin = (int(x) for x in done.stdout.split())
    assert health in (200, 503) and metrics in (401, 403, 503), done.stdout + done.stderr
    assert admin == 301  # pages still go to HTTPS


@pytest.mark.parametrize(
    ("secret", "says"),
    [("change-me", "placeholder 'change-me'"), ("x" * 20 + "abcde", "25 characters long; at least 50"), ("", "is not set")],
)
def test_a_weak_secret_is_refused_when_debug_is_off(secret: str, says: str):
    done = _manage(process_environment("web", DJANGO_SECRET_KEY=secret), "check")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: DJANGO_SECRET_KEY") and says in lines[0]


def test_debug_runs_without_a_secret():
    done = _manage(process_environment("web", DJANGO_SECRET_KEY="", DJANGO_DEBUG="true"), "check")
    assert done.returncode == 0, done.stderr


def test_the_secret_rule_follows_djangos_deployment_check():
    assert secret_key_problem("django-insecure-" + "k" * 50) == "is a development key (django-insecure- prefix)"
    assert secret_key_problem("ab" * 30) == "has fewer than 5 distinct characters"
    assert secret_key_problem("abcdefghij" * 5) is None


# Found by a new user's trial: `manage.py <cmd> --help` asked for DJANGO_DEBUG or a secret.
@pytest.mark.parametrize("args", [("canary_round", "--help"), ("routes_sync", "-h"), ("help", "ignore_list"), ("help",), ()])
def test_help_needs_neither_a_secret_nor_a_database(args: tuple[str, ...]):
    # The compose environment's database (host "db") is not reachable here: help never asks.
    done = _manage(process_environment("web", DJANGO_SECRET_KEY=""), *args)
    assert done.returncode == 0, done.stderr
    assert "usage: manage.py" in done.stdout or "canary_round" in done.stdout
    assert "DJANGO_SECRET_KEY" not in done.stderr and "not properly configured" not in done.stdout + done.stderr


@pytest.mark.parametrize("command", [
    [sys.executable, "manage.py", "runserver", "--noreload"],
    # What gunicorn loads, with a help option in its arguments: not manage.py, so no help.
    [sys.executable, "-c", "import reverie_ops.wsgi", "--help"],
    # After "--" a "--help" is a value (a file name), and the command would run.
    [sys.executable, "manage.py", "exclusions_load", "--", "--help"],
], ids=["runserver", "wsgi", "after-double-dash"])
def test_serving_or_running_a_command_still_refuses_without_a_secret(command: list[str]):
    env = {**process_environment("web", DJANGO_SECRET_KEY=""), "DJANGO_SETTINGS_MODULE": "reverie_ops.settings"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "DJANGO_SECRET_KEY is not set" in done.stderr, done.stderr


def test_a_help_invocation_is_manage_py_asked_for_help_or_its_version_only():
    for argv in (["manage.py"], ["/srv/app/manage.py", "--help"], ["manage.py", "version"],
                 ["manage.py", "canary_round", "--model", "m", "-h"], ["manage.py", "check", "--version"]):
        assert help_invocation(argv), argv
    for argv in ([], ["manage.py", "runserver"], ["manage.py", "exclusions_load", "--", "-h"],
                 ["manage.py", "shell", "-c", "print('-h')"], ["gunicorn", "--help"], ["-c", "--help"],
                 ["manage.py", "canary_round", "--model=--help"]):
        assert not help_invocation(argv), argv
