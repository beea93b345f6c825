"""The site has a favicon: ``/favicon.ico`` sends browsers to a static icon that exists."""

from __future__ import annotations

from django.contrib.staticfiles import finders
from django.test import Client


def test_favicon_redirects_to_a_static_icon_that_exists():
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("core/favicon.svg")
    assert finders.find("core/favicon.svg")
