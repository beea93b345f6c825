"""ASGI entry point (``uvicorn reverie_ops.asgi:application``): the trial deployment.

It serves the gateway through ``routing.api_async`` (an async view; the gateway itself
runs on a thread pool and its stream is handed to the event loop chunk by chunk), so
that a stream never waits behind another. Measured against gunicorn gthread by
``bench/gateway.py --asgi``; the README's "How it scales" says which one is deployed and why.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
# Under ASGI a sync view would run on one thread per request with its whole stream
# buffered by Django: the gateway's door is the async view.
os.environ.setdefault("ROUTING_ASYNC_VIEW", "true")
application = get_asgi_application()
