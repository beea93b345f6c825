"""``POST /v1/chat/completions``: the OpenAI-compatible gateway endpoint.

Auth: ``Authorization: Bearer <service token>`` (``core.tokens``). The contract is named
in the ``X-Routing-Contract: <name>@<version>`` header; ``Idempotency-Key`` names the
operation, scoped to the calling service (``routing.idempotency_key``, routing/README.md).
The view only parses input, calls ``chat_completion_create`` and renders.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from core.languages import language_of_tag
from core.shown import quoted, sent_twice, shown
from core.strict_json import loads_marking
from core.tokens import service_token_caller
from routing.idempotency_key import HEADER as HEADER_IDEMPOTENCY
from routing.idempotency_key import idempotency_key_parse
from routing.models import ContractVersion
from routing.responses import HEADER_CONTRACT, HEADER_LANGUAGE, GatewayReply, error_reply, sse_body
from routing.services.chat import chat_completion_create
from routing.terms import ErrorCode


def post_only(view: Any) -> Any:
    """POST only, refused in the gateway's JSON error shape (405 with ``Allow``)."""

    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse | StreamingHttpResponse:
        if request.method != "POST":
            response = _render(error_reply(405, ErrorCode.METHOD_NOT_ALLOWED, f"use POST, not {request.method}"), stream=False)
            response["Allow"] = "POST"
            return response
        return view(request, *args, **kwargs)

    wrapped.__doc__ = view.__doc__
    wrapped.__name__ = view.__name__
    return wrapped


def _render(reply: GatewayReply, *, stream: bool) -> HttpResponse | StreamingHttpResponse:
    response: HttpResponse | StreamingHttpResponse
    if reply.stream is not None:
        # Each event is written as it comes (WSGI iterates the response); a client that
        # disconnects makes the server close the iterator, which cancels the upstream.
        response = StreamingHttpResponse(reply.stream, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
    elif stream and reply.ok:
        response = HttpResponse(sse_body(reply), content_type="text/event-stream")
    else:
        response = JsonResponse(reply.body, status=reply.status, json_dumps_params={"ensure_ascii": False})
    for name, value in reply.headers.items():
        response[name] = value
    if reply.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


# How much of a bad header an error repeats (a 20 KB header came back whole).
SHOWN_MAX = 120
# The longest contract name the table holds (read once, not per request).
CONTRACT_NAME_MAX = ContractVersion._meta.get_field("name").max_length


def header_as_sent(request: HttpRequest, name: str) -> str | None:
    """Header ``name`` as the client wrote it, or None when absent. WSGI hands headers
    over as Latin-1 (PEP 3333), so UTF-8 a client sent ("rôleplay-reply@1",
    "português") is read back as UTF-8, and an error quotes what was sent; bytes that are
    not UTF-8 stay as Latin-1 read them."""
    value = request.headers.get(name)
    if value is None:
        return None
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def parse_contract_header(value: str | None) -> tuple[str, int]:
    """``"invoice-extract@3"`` -> ("invoice-extract", 3). Raises ValueError with a message."""
    if not value:
        raise ValueError(f"the {HEADER_CONTRACT} header is required: <contract name>@<version>")
    name, sep, version = value.strip().rpartition("@")
    named = quoted(value, SHOWN_MAX)
    if "@" in name:  # a contract name has no '@' (routing.contracts)
        raise ValueError(f"{HEADER_CONTRACT} names one contract, <contract name>@<version>; got {named}"
                         f"{sent_twice(value)}")
    # ASCII digits only: "١" (Arabic-Indic one) is a digit to Python and int() reads it as 1.
    if not sep or not name or not (version.isascii() and version.isdigit()) or int(version) < 1:
        raise ValueError(f"{HEADER_CONTRACT} must be <contract name>@<version>, e.g. invoice-extract@3; got {named}")
    if CONTRACT_NAME_MAX is not None and len(name) > CONTRACT_NAME_MAX:
        # No contract can have it; looked up, a 60,000-character name broke SQLite's
        # LIKE (the case-insensitive hint) and was answered 503 "database unavailable".
        raise ValueError(f"{HEADER_CONTRACT}: a contract name has at most {CONTRACT_NAME_MAX} characters; got {named}")
    return name, int(version)


@csrf_exempt
@post_only
def chat_completions_view(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    caller = service_token_caller(request.headers.get("Authorization"))
    if caller is None:
        refused = _render(error_reply(401, ErrorCode.UNAUTHORIZED, "a valid service token is required (Authorization: Bearer ...)",
                                      header="Authorization"), stream=False)
        refused["WWW-Authenticate"] = "Bearer"  # a 401 names its scheme (RFC 9110 section 11.6.1; RFC 6750)
        return refused
    try:
        name, version = parse_contract_header(header_as_sent(request, HEADER_CONTRACT))
    except ValueError as exc:
        return _render(error_reply(400, ErrorCode.INVALID_CONTRACT_HEADER, str(exc), header=HEADER_CONTRACT),
                       stream=False)
    if request.content_type != "application/json":
        # Only JSON is read as JSON: a form or a text body was parsed as JSON before.
        sent = request.headers.get("Content-Type")
        # A missing header is said missing; a WSGI server built on wsgiref (runserver)
        # reports a missing one as a bare text/plain, so that one says it may be missing.
        said = ("and the Content-Type header is missing" if not sent
                else "not 'text/plain' (or the Content-Type header is missing: this server reports that as text/plain)"
                if sent == "text/plain" else f"not {shown(sent, 100)!r}")
        response = _render(error_reply(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                                       f"the body must be JSON sent as Content-Type: application/json, {said}",
                                       header="Content-Type"), stream=False)
        response["Accept-Post"] = "application/json"
        return response
    coding = request.headers.get("Content-Encoding")
    if coding and coding.strip().lower() != "identity":
        return _render(error_reply(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                                   f"the body must be sent without a content coding, not Content-Encoding: "
                                   f"{quoted(coding, 40)}", header="Content-Encoding"), stream=False)
    try:
        raw = request.body
    except RequestDataTooBig:
        return _render(error_reply(413, ErrorCode.PAYLOAD_TOO_LARGE, f"the body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"), stream=False)
    except ValueError:
        # Django's size check reads Content-Length as an integer; gunicorn refuses such a
        # header itself, a server that passes it on (runserver) reaches here.
        sent = quoted(request.META.get("CONTENT_LENGTH", ""), 40)
        return _render(error_reply(400, ErrorCode.INVALID_REQUEST, f"Content-Length must be a number of bytes, not {sent}",
                                   header="Content-Length"), stream=False)
    if not raw and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        # Django reads a body by its Content-Length only; the proxy in front sends one.
        return _render(error_reply(411, ErrorCode.LENGTH_REQUIRED, "send the body with a Content-Length: a chunked "
                                   "request body is not read", header="Content-Length"), stream=False)
    if not raw:
        return _render(error_reply(400, ErrorCode.INVALID_JSON, "the body is empty: send the request as a JSON object"),
                       stream=False)
    try:
        # UTF-8, a byte-order mark ignored (RFC 8259 section 8.1). Numbers JSON has not
        # (NaN, 1e400) are kept marked, for the body check to refuse naming the field.
        body = loads_marking(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return _render(error_reply(400, ErrorCode.INVALID_JSON, f"the body is not UTF-8 (JSON text is, RFC 8259 section 8.1): "
                                                        f"byte 0x{raw[exc.start]:02x} at offset {exc.start}"), stream=False)
    except ValueError as exc:
        return _render(error_reply(400, ErrorCode.INVALID_JSON, f"the body is not valid JSON: {exc}"), stream=False)
    except RecursionError:
        return _render(error_reply(400, ErrorCode.INVALID_JSON, "the body nests arrays or objects too deeply"), stream=False)
    if not isinstance(body, dict):
        return _render(error_reply(400, ErrorCode.INVALID_REQUEST, "the body must be a JSON object"), stream=False)
    try:
        key = idempotency_key_parse(request.headers.get(HEADER_IDEMPOTENCY))
    except ValueError as exc:
        return _render(error_reply(400, ErrorCode.INVALID_IDEMPOTENCY_KEY, str(exc), header=HEADER_IDEMPOTENCY), stream=False)
    language = header_as_sent(request, HEADER_LANGUAGE)
    if language is not None:
        # The languages the language judge reads (core.languages): another code could
        # never be checked before the commit point.
        try:
            language = language_of_tag(language)
        except ValueError as exc:
            return _render(error_reply(400, ErrorCode.INVALID_EXPECTED_LANGUAGE, f"{HEADER_LANGUAGE}: {exc}",
                                       header=HEADER_LANGUAGE), stream=False)
    reply = chat_completion_create(name, version, body, operation_id=key, language=language,
                                  caller=caller)
    return _render(reply, stream=body.get("stream") is True)
