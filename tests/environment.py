"""Pytest plugin (``-p tests.environment`` in pyproject.toml): the suite's environment.

Loaded before pytest-django reads the settings, so it can give them what production
requires and a test run does not have: a secret key (random per run; DEBUG stays off, as
in production) and plain HTTP (no HTTPS redirect, no Secure-only cookies for the test
client, the live server and Chromium). Child processes the tests start inherit both.
A variable already set in the environment wins.
"""

from __future__ import annotations

import os
import secrets

os.environ.setdefault("DJANGO_SECRET_KEY", "test-run-" + secrets.token_urlsafe(48))
os.environ.setdefault("DJANGO_HTTPS", "false")
