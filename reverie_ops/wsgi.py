"""WSGI entry point (gunicorn reverie_ops.wsgi; runserver loads it too): the gateway's
paths through their own middleware, the rest through the whole stack
(``reverie_ops.handlers``).

The process is warmed here, as the application loads, so it accepts no request before the
judges and the language detector are built, the URLconf imported and one request has
passed through the middleware (``routing.warm``, ``reverie_ops.warm_request``). Under gunicorn's
``preload_app`` this module loads in the arbiter: only the judges are built there (fork
safe, and the workers share their pages); each worker builds its gateway in
``post_worker_init`` (``observability/gunicorn_conf.py``).
"""

import os

from django.conf import settings

from reverie_ops.handlers import wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
application = wsgi_application()

from reverie_ops.warm_request import handler_warm  # noqa: E402 - needs the settings configured above
from routing.warm import warm_process  # noqa: E402

if settings.WARM_START:
    # Preloaded (the gunicorn settings say so), this is the arbiter: no threads or sockets.
    warm_process(gateway=os.environ.get("REVERIE_PRELOAD_APP") != "1", request=lambda: handler_warm(application))
