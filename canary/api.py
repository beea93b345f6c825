"""Internal API (``/api/v1/``): the ignore list for the product backend.

Thin views: parse input, call one selector, render. One error shape everywhere:
``{"error": {"code": <http status>, "message": "..."}}``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from canary.exclusions import IGNORE_LIST_MAX_ENTRIES, provider_object
from canary.selectors import watch_hint
from canary.services.ignore_list import ignore_list_cached
from canary.terms import Layer
from core.health import health_report
from core.identifiers import validate_model_id
from core.shown import shown
from core.tokens import service_token_verify


def api_error(status: int, message: str) -> JsonResponse:
    """The one error shape of the internal API; a long message is cut (``core.shown``)."""
    response = JsonResponse({"error": {"code": status, "message": shown(message)}}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="reverie-ops"'
    return response


def api_get(view: Any) -> Any:
    """Only GET/HEAD, answered in the API's error shape (405 JSON, not the HTML CSRF page:
    the API authenticates with bearer tokens, never cookies)."""

    @csrf_exempt
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = api_error(405, f"method {request.method} is not allowed here; use GET")
            response["Allow"] = "GET, HEAD"
            return response
        return view(request, *args, **kwargs)

    wrapped.__doc__ = view.__doc__
    wrapped.__name__ = view.__name__
    return wrapped


def _guard(request: HttpRequest) -> tuple[str | None, JsonResponse | None]:
    if not service_token_verify(request.headers.get("Authorization")):
        return None, api_error(401, "a valid service token is required: Authorization: Bearer <token>")
    unknown = sorted(k for k in request.GET if k != "model")
    if unknown:
        # A misspelt parameter (?modle=) was answered "'model' is required", hiding the typo.
        near = difflib.get_close_matches(unknown[0], ["model"], n=1, cutoff=0.6)
        hint = " (did you mean 'model'?)" if near else ""
        return None, api_error(400, f"unknown query parameter {unknown[0]!r}{hint}; the only parameter is 'model'")
    if len(request.GET.getlist("model")) > 1:
        # One list per request: the last of several would be a silent choice.
        return None, api_error(400, "query parameter 'model' is given more than once; ask for one model per request")
    model_id = (request.GET.get("model") or "").strip()
    if not model_id:
        return None, api_error(400, "query parameter 'model' is required, e.g. ?model=meta-llama/llama-3.3-70b-instruct")
    try:
        return validate_model_id(model_id), None
    except ValueError as exc:
        return None, api_error(400, f"query parameter 'model': {exc}")


def _cached_json(request: HttpRequest, body: dict[str, Any], stable: Any) -> HttpResponse:
    # The ETag covers what routing uses, not generated_at, so an unchanged list gives 304.
    etag = '"' + hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:32] + '"'
    # Weak comparison (RFC 9110 §13.1.2): W/"x" matches "x", and * matches any.
    candidates = [t.strip().removeprefix("W/") for t in request.headers.get("If-None-Match", "").split(",")]
    if etag in candidates or "*" in candidates:
        response = HttpResponse(status=304)
        del response["Content-Type"]  # no body: Django's default text/html would describe none
        # A 304's Content-Length is the 200's or none (RFC 9110 section 8.6); left unset,
        # CommonMiddleware would count this empty body as 0.
        response["Content-Length"] = str(len(JsonResponse(body).content))
    else:
        response = JsonResponse(body)
    response["ETag"] = etag
    response["Cache-Control"] = f"private, max-age={settings.ROUTING_IGNORE_MAX_AGE_S}"
    return response


@api_get
def ignore_view(request: HttpRequest) -> HttpResponse:
    """``GET /api/v1/routing/ignore?model=ID``: the merged ignore list with its sources."""
    model_id, error = _guard(request)
    if error is not None or model_id is None:
        return error or api_error(400, "bad request")
    cached = ignore_list_cached(model_id)
    body = {**cached.data, "generated_at": cached.generated_at.isoformat(), **_hint(model_id)}
    return _cached_json(request, body, cached.data)


@api_get
def provider_view(request: HttpRequest) -> HttpResponse:
    """``GET /api/v1/routing/provider?model=ID``: the ready-to-merge OpenRouter ``provider``."""
    model_id, error = _guard(request)
    if error is not None or model_id is None:
        return error or api_error(400, "bad request")
    provider = provider_object(ignore_list_cached(model_id).data["ignore"])
    return _cached_json(request, {"model": model_id, "provider": provider, **_hint(model_id)}, provider)


def _hint(model_id: str) -> dict[str, str]:
    # Only for a model the canary does not watch: an empty list there is not "all clear",
    # and a misspelt model id is the usual cause.
    hint = watch_hint(model_id)
    return {"hint": hint} if hint else {}


@api_get
def health_view(request: HttpRequest) -> JsonResponse:
    """``GET /api/v1/health``: 200 ``{"status": "ok", "checks": {...}}`` when the database,
    Redis and the broker answer; else 503 with ``Retry-After``, ``"down"`` naming each one
    that does not and ``checks`` its reason, in the API's error shape too
    (``core.health``; checked at most once a second per process)."""
    report = health_report(settings.REDIS_URL, settings.CELERY_BROKER_URL)
    if report.ok:
        return JsonResponse({"status": "ok", "checks": report.checks})
    message = "down: " + ", ".join(report.down)
    response = JsonResponse({"status": "down", "down": report.down, "checks": report.checks,
                             "error": {"code": 503, "message": message}}, status=503)
    response["Retry-After"] = str(settings.DATABASE_UNAVAILABLE_RETRY_AFTER_S)
    return response


@api_get
def openapi_view(request: HttpRequest) -> JsonResponse:
    """``GET /api/v1/openapi.json``: the OpenAPI 3.1 document of the internal API."""
    return JsonResponse(OPENAPI)


_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}}},
}
_MODEL_PARAM = {"name": "model", "in": "query", "required": True, "schema": {"type": "string"}, "example": "meta-llama/llama-3.3-70b-instruct"}
_COMMON = {
    "304": {"description": "Not modified (If-None-Match matched the ETag)"},
    "400": {"description": "Missing model, or an unknown query parameter", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
    "401": {"description": "Missing or invalid service token", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
}
OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Reverie Ops internal API", "version": "1"},
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": _ERROR,
            "IgnoreList": {
                "type": "object",
                "required": ["model", "ignore", "sources", "generated_at"],
                "properties": {
                    "model": {"type": "string"},
                    "ignore": {"type": "array", "items": {"type": "string"}, "maxItems": IGNORE_LIST_MAX_ENTRIES, "description": "provider slugs or endpoint tags for OpenRouter's provider.ignore"},
                    "sources": {
                        "type": "object",
                        "properties": {k: {"type": "array", "items": {"type": "string"}} for k in Layer},
                    },
                    "generated_at": {"type": "string", "format": "date-time"},
                    "hint": {"type": "string", "description": "present only when the canary does not watch the model (no endpoints discovered, not configured): the list then holds exclusions only"},
                },
            },
        },
    },
    "security": [{"bearer": []}],
    "paths": {
        "/api/v1/routing/ignore": {
            "get": {
                "summary": "Merged ignore list of a model, with the source layer of each entry",
                "parameters": [_MODEL_PARAM],
                "responses": {"200": {"description": "The list", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/IgnoreList"}}}}, **_COMMON},
            }
        },
        "/api/v1/routing/provider": {
            "get": {
                "summary": "Ready-to-merge OpenRouter provider object ({ignore: [...]})",
                "parameters": [_MODEL_PARAM],
                "responses": {"200": {"description": "The provider object"}, **_COMMON},
            }
        },
        "/api/v1/routing/breakers": {
            "get": {
                "summary": "Every route's circuit breakers: state, reason, since, until, recent failures with operation ids",
                "responses": {
                    "200": {"description": "The breakers, by route", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "401": _COMMON["401"],
                    "503": {"description": "The breaker store (Redis) cannot be read",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
                },
            }
        },
        "/api/v1/health": {
            "get": {
                "summary": "Whether the database, Redis and the broker answer (no token needed)",
                "security": [],
                "responses": {
                    "200": {"description": "All answer: {status: ok, checks}", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "503": {"description": "One or more are down: {status: down, down, checks, error} with Retry-After",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
                },
            }
        },
        "/v1/chat/completions": {
            "post": {
                "summary": "The reliable routing gateway: an OpenAI-compatible chat completion served under a routing contract",
                "description": (
                    "The body is an OpenAI chat completion request (messages, max_tokens, tools, response_format, "
                    "stream ...); the contract chooses the routes, so a `model` field is ignored. The answer is "
                    "validated against the contract before it is returned (streamed answers too, in one content "
                    "chunk). Failures name their class: permanent, transient, incompatible, invalid_response, "
                    "ambiguous."
                ),
                "parameters": [
                    {"name": "X-Routing-Contract", "in": "header", "required": True, "schema": {"type": "string"},
                     "example": "invoice-extract@3", "description": "contract name @ version"},
                    {"name": "Idempotency-Key", "in": "header", "required": False,
                     "schema": {"type": "string", "minLength": 1, "maxLength": 100},
                     "description": ("operation id, on any contract (required with side effects): a repeat of an accepted "
                                     "request with the same body returns the first answer (Idempotent-Replayed: true); "
                                     "another body with the same key is a 422")},
                ],
                "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {
                    "200": {
                        "description": "The accepted answer (chat.completion, or SSE chunks when stream is true)",
                        "headers": {
                            "X-Routing-Route": {"schema": {"type": "string"}, "description": "the route that answered"},
                            "X-Routing-Attempts": {"schema": {"type": "integer"}, "description": "attempts made"},
                            "X-Routing-Operation-Id": {"schema": {"type": "string"}},
                        },
                    },
                    **{
                        code: {"description": why, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GatewayError"}}}}
                        for code, why in (
                            ("400", "Malformed request, header or contract reference"),
                            ("401", "Missing or invalid service token"),
                            ("404", "Unknown contract or version"),
                            ("409", "The Idempotency-Key's first request is still running or ended unknown"),
                            ("413", "Body too large"),
                            ("422", "No route can serve this contract and request, or an Idempotency-Key reused for another request"),
                            ("502", "Every attempt failed (or the outcome of a side effect is unknown)"),
                            ("503", "Every route is suppressed by a circuit breaker or the ignore list (Retry-After)"),
                            ("504", "The contract's deadline ran out"),
                        )
                    },
                },
            }
        },
    },
}
OPENAPI["components"]["schemas"]["GatewayError"] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "code", "failure_class", "message", "operation_id"],
            "properties": {
                "type": {"const": "routing_error"},
                "code": {"type": "string"},
                "failure_class": {"enum": ["permanent", "transient", "incompatible", "invalid_response", "ambiguous"]},
                "message": {"type": "string"},
                "operation_id": {
                    "type": "string", "minLength": 1,
                    "description": "the id to quote for this failure, also in X-Routing-Operation-Id: every error has one, refusals before any attempt included",
                },
                "contract": {"type": ["string", "null"]},
                "attempts": {"type": "array", "items": {"type": "object"}, "description": "one entry per attempt: route, status, failure class, latency ms, validation"},
                "rejected_routes": {"type": ["object", "array", "null"]},
                "field": {"type": "string", "description": "the body field a 400 refuses (messages[2].content)"},
                "header": {"type": "string", "description": "the request header an error is about (Idempotency-Key)"},
            },
        }
    },
}
