"""``chat_completion_create``: the in-process client backends call (the API view calls it
too): contract, body checks, idempotency key, the process's gateway, the reply.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, transaction

from routing.contracts import ContractError
from routing.gateway.door import Gateway
from routing.request_check import BodyInvalid, RequestInvalid, body_check
from routing.request_fields import request_fields_check
from routing.request_values import request_values_check
from routing.responses import HEADER_CONTRACT, GatewayReply, error_reply, reply_for
from routing.services.contracts import ContractNotFound, contract_get
from routing.services.ledger import (
    request_idempotency_abandon,
    request_idempotency_claim,
    request_idempotency_settle,
)
from routing.services.wiring import gateway_get
from routing.terms import ErrorCode, RequestOutcome

log = logging.getLogger(__name__)


def chat_completion_create(
    contract: str,
    version: int,
    body: dict[str, Any],
    *,
    operation_id: str | None = None,
    gateway: Gateway | None = None,
    language: str | None = None,
    caller: str | None = None,
) -> GatewayReply:
    """The in-process client: what ``POST /v1/chat/completions`` does, without HTTP.

    ``contract``/``version`` name the contract; ``body`` is an OpenAI chat request;
    ``operation_id`` is the idempotency key, optional except for contracts with side
    effects; with any contract it means the same (``request_idempotency_claim``).
    ``body["stream"]`` true under a ``prefix`` commit point: an accepted reply carries
    ``stream`` (the event stream, passed on as it arrives). ``language`` (ISO 639-1) is
    the language the reply must be in (pre-commit check). ``caller`` (the service
    token's name) scopes ``operation_id`` to that caller (``request_ledger_key``).
    Returns a ``GatewayReply`` (status, body, headers); never raises for bad input.
    """
    try:
        spec = contract_get(contract, version)
    except ContractNotFound as exc:
        # The HTTP door's X-Routing-Contract named it.
        return error_reply(404, ErrorCode.UNKNOWN_CONTRACT, str(exc), header=HEADER_CONTRACT)
    except ContractError as exc:
        return error_reply(500, ErrorCode.INVALID_CONTRACT, f"stored contract {contract}@{version} is invalid: {exc}")
    try:
        # Unknown fields first: a misspelt key explains the field the body check finds missing.
        request_fields_check(body)
        body_check(body)
        request_values_check(body)
    except BodyInvalid as exc:
        # Refused at the edge: no route sees it, so none can be charged for it.
        return error_reply(400, ErrorCode.INVALID_REQUEST, str(exc), field=exc.path or None)
    gw = gateway or gateway_get()
    ledger_key, run_id, early = request_idempotency_claim(spec, operation_id, body, caller=caller)
    if early is not None:
        return early
    try:
        result = gw.complete(spec, body, operation_id=run_id or operation_id, stream=body.get("stream") is True,
                             language=language)
    except RequestInvalid as exc:
        request_idempotency_settle(spec, ledger_key, RequestOutcome.FAILED)
        return error_reply(400, ErrorCode.INVALID_REQUEST, str(exc), field=exc.path or None)
    except Exception:
        request_idempotency_abandon(spec, ledger_key)
        raise
    reply = reply_for(result)
    if ledger_key is None:
        # No key, nothing to settle: a transaction here would open a database connection
        # per request for nothing (the request path reads no table once its token and
        # contract are cached).
        return reply
    try:
        # Atomic: a refused write rolls back alone (a savepoint inside a caller's transaction).
        with transaction.atomic():
            request_idempotency_settle(spec, ledger_key, result.outcome, reply)
    except DatabaseError:
        # The answer could not be kept for replay (jsonb refuses U+0000) or the database
        # went away: the client still gets its answer, and the key is not left claimed.
        log.exception("operation %s: its idempotency key could not be settled %s", result.operation_id, result.outcome)
        request_idempotency_abandon(spec, ledger_key)
    return reply
