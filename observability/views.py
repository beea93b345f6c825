"""``GET /metrics``: the Prometheus exposition, for a scraper holding a service token.

Protected by a service token (``Authorization: Bearer <token>``, issued with
``manage.py service_token issue prometheus``): the same tokens as the internal API, so a
token can be revoked without a deploy. Celery workers expose theirs on a separate listen
address instead (``observability.worker``), never published outside the compose network.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client.exposition import choose_encoder

from canary.tokens import service_token_verify
from observability.registry import web_registry


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """The metrics of every web process, the breaker state and the canary's aggregates.
    401 without a valid service token."""
    if not service_token_verify(request.headers.get("Authorization")):
        response = HttpResponse("a valid service token is required: Authorization: Bearer <token>\n",
                                status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
    return HttpResponse(encoder(web_registry()), content_type=content_type)
