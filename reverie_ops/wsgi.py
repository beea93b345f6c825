"""WSGI entry point (gunicorn reverie_ops.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
application = get_wsgi_application()
