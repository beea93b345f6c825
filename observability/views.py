"""``GET /metrics``: the Prometheus exposition, for a scraper holding a service token.

Protected by a service token (``Authorization: Bearer <token>``, issued with
``manage.py service_token issue prometheus``): the same tokens as the internal API, so a
token can be revoked without a deploy. Celery workers expose theirs on a separate listen
address instead (``observability.worker``), never published outside the compose network.
"""

from __future__ import annotations

import time

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from canary.api import api_error, api_get
from core.tokens import service_token_verify
from observability.breakers import breaker_json
from observability.registry import web_exposition
from routing.models import Route
from routing.services.wiring import breaker_store


# CSRF-exempt: a scraper sends no cookie, and a POST must be refused as the wrong method
# (405 with Allow), not as a forged form (the CSRF 403 page it got before).
@csrf_exempt
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """The metrics of every web process, the breaker state and the canary's aggregates,
    in the Prometheus text format 0.0.4. 401 without a valid service token; 405 for
    any method but GET and HEAD; a JSON 503 while the database (which holds the tokens)
    is down (``reverie_ops.middleware``)."""
    if not service_token_verify(request.headers.get("Authorization")):
        response = HttpResponse("a valid service token is required: Authorization: Bearer <token>\n",
                                status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(web_exposition(), content_type=CONTENT_TYPE_LATEST)


@api_get
def breakers_view(request: HttpRequest) -> HttpResponse:
    """``GET /api/v1/routing/breakers``: every route's circuit breakers for on-call tools
    (``observability.breakers.breaker_json``: state, reason, since, until, the last
    failures with their operation ids, seconds held open). Errors in the internal API's
    shape (``canary.api.api_error``: ``{"error": {"code", "message"}}``): 401 without a
    service token, 405 for a method but GET/HEAD, 503 when Redis cannot be read."""
    if not service_token_verify(request.headers.get("Authorization")):
        return api_error(401, "a valid service token is required: Authorization: Bearer <token>")
    routes = list(Route.objects.order_by("name").values_list("name", flat=True))
    try:
        body = breaker_json(breaker_store(), routes, int(time.time() * 1000))
    except Exception as exc:  # noqa: BLE001 - on-call tools get an answer without Redis
        return api_error(503, f"breaker store unavailable ({type(exc).__name__}: {exc})")
    return JsonResponse(body)
