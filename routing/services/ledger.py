"""The execution ledger: ``ledger_claim``, ``ledger_finish``, ``ledger_sweep``, and for a
gateway request's ``Idempotency-Key`` (any contract) ``request_idempotency_claim``,
``_settle`` and ``_abandon`` (IETF draft "The Idempotency-Key HTTP Header Field").
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from routing.contracts import Contract
from routing.failures import FailureClass
from routing.idempotency_key import HEADER as HEADER_IDEMPOTENCY
from routing.models import ContractVersion, ExecutionLedger, RequestEvent
from routing.responses import GatewayReply, error_reply
from routing.terms import ErrorCode, LedgerStatus, RequestOutcome

log = logging.getLogger(__name__)


class LedgerConflict(Exception):
    """The key is claimed and still running (409), or its outcome is unknown."""

    def __init__(self, row: ExecutionLedger) -> None:
        super().__init__(f"{row.key} is {row.status}")
        self.row = row


class LedgerMismatch(Exception):
    """The key was used with other arguments (422)."""


def fingerprint(value: Any) -> str:
    """A stable digest of JSON-serialisable arguments."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def ledger_claim(key: str, *, kind: str, fingerprint_hex: str, operation_id: str = "") -> tuple[bool, ExecutionLedger]:
    """Claim execution ``key`` once. Returns (True, row) when this caller must run the
    side effect, (False, row) when it already ran ("done": replay ``row.result``).
    Raises ``LedgerConflict`` when it is running or its outcome is unknown, and
    ``LedgerMismatch`` when the key was used with different arguments.
    The unique constraint on ``key`` decides races between processes (style guide)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            row = ExecutionLedger.objects.create(
                key=key, kind=kind, fingerprint=fingerprint_hex, operation_id=operation_id,
                status=LedgerStatus.CLAIMED, created_at=now, updated_at=now,
            )
        return True, row
    except IntegrityError:
        row = ExecutionLedger.objects.get(key=key)
    if row.status == LedgerStatus.FAILED:
        # A released key runs again, with whatever arguments (nothing happened under it);
        # the conditional UPDATE lets exactly one of racing retries win.
        won = ExecutionLedger.objects.filter(pk=row.pk, status=LedgerStatus.FAILED).update(
            status=LedgerStatus.CLAIMED, fingerprint=fingerprint_hex, operation_id=operation_id, result=None,
            runs=F("runs") + 1, updated_at=now,
        )
        row = ExecutionLedger.objects.get(pk=row.pk)
        if won:
            return True, row
    if row.fingerprint != fingerprint_hex:
        raise LedgerMismatch(f"{key} was used with different arguments")
    if row.status == LedgerStatus.DONE:
        return False, row
    raise LedgerConflict(row)


def ledger_finish(key: str, status: LedgerStatus, result: Any = None) -> None:
    """Settle a claimed key: "done" (keep ``result`` for replay), "unknown" (keep, never
    replay), or "failed" (release: nothing happened, the caller may try again; the row
    stays, and the next ``ledger_claim`` reclaims it)."""
    if status == LedgerStatus.FAILED:
        ExecutionLedger.objects.filter(key=key, status=LedgerStatus.CLAIMED).update(status=LedgerStatus.FAILED, updated_at=timezone.now())
        return
    ExecutionLedger.objects.filter(key=key).update(status=status, result=result, updated_at=timezone.now())


def ledger_sweep(now: datetime, *, keep_s: float, lease_s: float) -> dict[str, int]:
    """Keep the execution ledger to what it promises (routing/README.md, "Idempotency").

    - Settled keys ("done", "failed") last updated more than ``keep_s`` seconds before
      ``now`` are deleted: the key may then be used again, as a new request. The IETF
      idempotency-key draft asks a server to publish how long it keeps keys; Stripe
      prunes them after 24 hours (docs/sources/resilience.md, "Idempotency keys").
    - A "claimed" key older than ``lease_s`` seconds belonged to a process that died
      while running it (no request outlives its contract's deadline): its side effect
      may have happened, so it becomes "unknown" (never replayed; an admin reads it in
      the ledger) instead of answering 409 "still running" for ever.
    - "unknown" keys are never deleted: only a person can say what happened.

    Returns ``{"pruned": n, "expired_claims": m}``.
    """
    pruned, _ = ExecutionLedger.objects.filter(
        status__in=(LedgerStatus.DONE, LedgerStatus.FAILED), updated_at__lt=now - timedelta(seconds=keep_s)
    ).delete()
    expired = ExecutionLedger.objects.filter(status=LedgerStatus.CLAIMED, updated_at__lt=now - timedelta(seconds=lease_s)).update(
        status=LedgerStatus.UNKNOWN, updated_at=now
    )
    return {"pruned": pruned, "expired_claims": expired}


# A claim's lease past the longest contract deadline (s): the request's own cleanup
# (settling its key) runs after the deadline, on a loaded machine a little later.
CLAIM_LEASE_MARGIN_S = 60.0


def claim_lease_s() -> float:
    """How long a "claimed" key may run before ``ledger_sweep`` takes its process for
    dead (s): ``ROUTING_CLAIM_LEASE_S``, and never less than the longest ``deadline_s``
    of any stored contract version plus ``CLAIM_LEASE_MARGIN_S``."""
    # A spec without deadline_s has the contract's default one.
    deadlines = [
        float(spec.get("deadline_s", Contract.deadline_s))
        for spec in ContractVersion.objects.values_list("spec", flat=True)
        if isinstance(spec, dict) and isinstance(spec.get("deadline_s", Contract.deadline_s), int | float)
    ]
    return max([float(settings.ROUTING_CLAIM_LEASE_S), *(d + CLAIM_LEASE_MARGIN_S for d in deadlines)])


def ledger_sweep_now() -> dict[str, int]:
    """``ledger_sweep`` at the current time with ``ROUTING_IDEMPOTENCY_KEEP_S`` and
    ``claim_lease_s()`` (the beat's ``routing-ledger-sweep``)."""
    return ledger_sweep(timezone.now(), keep_s=settings.ROUTING_IDEMPOTENCY_KEEP_S, lease_s=claim_lease_s())


IDEMPOTENCY_KEY_MAX = 100  # the operation_id columns' length


def request_ledger_key(contract_name: str, key: str, caller: str | None = None) -> str:
    """The execution ledger's key for a request's ``Idempotency-Key`` ``key``: scoped by
    the calling service (``caller``, its service token's name, ``core.tokens``), so two
    services sending the same key never share a row (one would be replayed the other's
    answer). ``request@<caller digest>:<contract>:<key>`` for a caller;
    ``request:<contract>:<key>`` for the in-process client (no caller), which is also
    the format of rows written before keys were scoped (routing/README.md, "Idempotency")."""
    if caller is None:
        return f"request:{contract_name}:{key}"
    return f"request@{_caller_digest(caller)}:{contract_name}:{key}"


def _caller_digest(caller: str) -> str:
    # A digest, not the name: the ledger key stays short and the same length for every name.
    return hashlib.sha256(caller.encode()).hexdigest()[:16]


def request_operation_id(ledger_key: str) -> str:
    """The operation id (``X-Routing-Operation-Id``, completion ``rvo-<id>``) of the first
    run of a caller's key: 32 hex digits derived from ``ledger_key``, so the same for a
    replay of that caller's key and different for another caller's same key."""
    return hashlib.sha256(ledger_key.encode()).hexdigest()[:32]


def request_idempotency_claim(
    spec: Contract, operation_id: str | None, body: dict[str, Any], *, caller: str | None = None
) -> tuple[str | None, str | None, GatewayReply | None]:
    """Claim a gateway request's idempotency key in the execution ledger, for every
    contract alike (IETF draft "The Idempotency-Key HTTP Header Field": a key names one
    request; the same key with another body is 422, a repeat of a finished request gets
    the first answer, a repeat while it runs gets 409).

    Returns ``(ledger_key, run_id, None)`` when the caller must run the request under the
    operation id ``run_id`` and then call ``request_idempotency_settle`` with
    ``ledger_key`` (both ``None`` without a key), or ``(None, None, reply)`` to answer at
    once: the replayed first answer (``replayed=True``), 400 for a key longer than 100
    characters or a contract with side effects without one, 422 for another body, 409
    while the first request runs or, with side effects, after its outcome was unknown.
    ``caller`` scopes the key (``request_ledger_key``). ``run_id`` is, on its first run,
    the key itself without a caller, and ``request_operation_id`` with one; a key released by a failure runs again
    under a fresh id (each run has its own request event), and so does a key whose id an
    earlier request holds already (the same key on another contract, or on this one after
    ``ledger_sweep`` pruned it): request events are unique per operation id.
    """
    if not operation_id:
        if spec.side_effects:
            return None, None, error_reply(400, ErrorCode.IDEMPOTENCY_KEY_REQUIRED,
                                           f"contract {spec.key} has side effects: send an Idempotency-Key",
                                           header=HEADER_IDEMPOTENCY)
        return None, None, None
    if len(operation_id) > IDEMPOTENCY_KEY_MAX:
        return None, None, error_reply(400, ErrorCode.INVALID_IDEMPOTENCY_KEY,
                                       f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} characters, got {len(operation_id)}",
                                       header=HEADER_IDEMPOTENCY)
    ledger_key = request_ledger_key(spec.name, operation_id, caller)
    first_id = operation_id if caller is None else request_operation_id(ledger_key)
    try:
        claimed, row = ledger_claim(ledger_key, kind="request", fingerprint_hex=fingerprint(body), operation_id=first_id)
    except LedgerMismatch:
        # The caller's own key, not the ledger row's (which holds a digest of the caller's name).
        return None, None, error_reply(422, ErrorCode.IDEMPOTENCY_KEY_REUSED,
                                       f"Idempotency-Key {operation_id!r} was used with a different body on contract "
                                       f"{spec.name}; use a new key for a new request", header=HEADER_IDEMPOTENCY)
    except LedgerConflict as exc:
        detail = ("is still running; once it ends, the same request with this key is answered with its result"
                  if exc.row.status == LedgerStatus.CLAIMED else "has an unknown outcome and is not replayed")
        return None, None, error_reply(409, ErrorCode.IDEMPOTENCY_CONFLICT,
                                       f"the request of Idempotency-Key {operation_id!r} on contract {spec.name} {detail}",
                                       failure_class=FailureClass.AMBIGUOUS if exc.row.status == LedgerStatus.UNKNOWN else FailureClass.TRANSIENT,
                                       header=HEADER_IDEMPOTENCY)
    if not claimed:
        stored = row.result or {}
        return None, None, GatewayReply(stored.get("status", 200), stored.get("body", {}), stored.get("headers", {}), replayed=True)
    if row.runs == 1 and not _operation_id_taken(first_id, row.pk):
        return ledger_key, first_id, None
    run_id = uuid.uuid4().hex
    ExecutionLedger.objects.filter(pk=row.pk).update(operation_id=run_id)
    return ledger_key, run_id, None


def _operation_id_taken(operation_id: str, ledger_pk: int) -> bool:
    """Does another request hold ``operation_id`` already: another ledger row (the same
    key claimed on another contract; the ledger is written before the request runs) or a
    request event (a run whose ledger row was pruned)? Two contracts claiming one key in
    the same instant can still both see it free; the second's events are then dropped
    with a log line."""
    return (
        ExecutionLedger.objects.filter(operation_id=operation_id).exclude(pk=ledger_pk).exists()
        or RequestEvent.objects.filter(operation_id=operation_id).exists()
    )


def request_idempotency_settle(spec: Contract, ledger_key: str | None, outcome: RequestOutcome, reply: GatewayReply | None = None) -> None:
    """Settle the key ``request_idempotency_claim`` claimed, from the gateway's outcome: an
    accepted answer is kept and replayed; any other outcome releases the key, so the
    caller may retry with it, except an unknown outcome of a contract with side effects,
    kept and never replayed (it may have happened). Without side effects an unknown outcome
    is released too: running the request again harms nothing. A streamed answer (past its
    commit point) has no body to replay: its key is released. No-op without a key."""
    if ledger_key is None:
        return
    if outcome == RequestOutcome.ACCEPTED and reply is not None and reply.stream is None:
        ledger_finish(ledger_key, LedgerStatus.DONE, {"status": reply.status, "body": reply.body, "headers": reply.headers})
    elif outcome == RequestOutcome.UNKNOWN and spec.side_effects:
        ledger_finish(ledger_key, LedgerStatus.UNKNOWN)
    else:
        ledger_finish(ledger_key, LedgerStatus.FAILED)




def request_idempotency_abandon(spec: Contract, ledger_key: str | None) -> None:
    """Settle a claimed key whose outcome could not be recorded: "unknown" (kept, never
    replayed) for a contract with side effects, released otherwise, as
    ``request_idempotency_settle`` does for an unknown outcome. When the database refuses
    that too, the key stays claimed until ``ledger_sweep`` marks it unknown after its
    lease (``claim_lease_s``); nothing is raised."""
    try:
        request_idempotency_settle(spec, ledger_key, RequestOutcome.UNKNOWN)
    except DatabaseError:
        log.exception("idempotency key %s stays claimed until its lease ends", ledger_key)
