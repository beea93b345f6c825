"""The gateway's vocabulary, one enum per term (pure: no Django, no imports of routing).

Every value is the exact string stored in an event row, a Redis hash, the API's JSON, a
metric label or a template: ``StrEnum`` members equal those strings, so rows written
before the enums read back the same. Code compares against the members, never against
bare strings (``tests/test_vocabulary.py`` holds it).

"Outcome" meant several things; each has its own name here: a request's
(``RequestOutcome``), an attempt's (``AttemptStatus``), a call as its route's breaker counts
it (``BreakerOutcome``), an idempotency key's (``LedgerStatus``). An attempt's raw read
result is the ``AttemptOutcome`` dataclass (``routing.gateway.upstream``), not a string.
Terms defined elsewhere keep their one home: the failure classes are
``routing.failures.FailureClass``; a check's verdict (``pass``, ``fail``, ``inconclusive``)
is the canary's ``canary.verdicts.Verdict``; ``malformed_body``, a 200 event stream that
is not one, is the wire's (``openrouter.notsse``), the canary's probe check and the
gateway's signal and failure reason alike.
"""

from __future__ import annotations

from enum import StrEnum

from openrouter import notsse


class RequestOutcome(StrEnum):
    """How one gateway request ended: ``GatewayResult.outcome``, the request event's
    ``outcome`` column (``RequestEvent.outcome``, its admin filter), the ``outcome`` label
    of the request metrics and the ``reverie.outcome`` span attribute. ``STREAMING`` is
    never stored: it marks a result whose stream passed its commit point and still flows
    (the final outcome comes when it ends)."""

    ACCEPTED = "accepted"
    FAILED = "failed"
    UNKNOWN = "unknown"  # an ambiguous failure of a workload with side effects: not replayed
    CANCELLED = "cancelled"  # the client disconnected mid-stream
    STREAMING = "streaming"


# What a request event's ``outcome`` column may hold (``RequestEvent.outcome`` choices).
STORED_REQUEST_OUTCOMES: tuple[RequestOutcome, ...] = (
    RequestOutcome.ACCEPTED, RequestOutcome.FAILED, RequestOutcome.UNKNOWN, RequestOutcome.CANCELLED,
)


class AttemptStatus(StrEnum):
    """How one attempt ended: ``AttemptRecord.status``, the attempt event's ``status``
    column, ``status`` of each attempt in an error body and the ``status`` label of the
    attempt metric. ``COMMITTED`` is transient: a stream past its commit point, until
    ``RequestRun.settle`` records how it ended."""

    ACCEPTED = "accepted"
    FAILED = "failed"
    REJECTED = "rejected"  # an answer arrived and failed validation or a check
    CANCELLED = "cancelled"  # a hedge loser, or the client left mid-stream
    COMMITTED = "committed"


class BreakerState(StrEnum):
    """A route's circuit breaker state for one failure class (docs/sources/resilience.md,
    "Circuit breakers"): ``Permit.state``, the attempt event's ``breaker_state``, the
    ``<class>:state`` fields of the route's Redis hash (the Lua scripts in
    ``routing.breaker`` spell the same words) and the breaker pages."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class BreakerOutcome(StrEnum):
    """One call as its route's breaker counts it (``BreakerStore.record``), besides a
    ``FailureClass`` value for a failure charged to the route: a success, or neutral
    (not the route's fault: a client that left, a failure the request itself caused)."""

    SUCCESS = "success"
    NEUTRAL = "neutral"


class LedgerStatus(StrEnum):
    """An execution key's state in the ledger: ``ExecutionLedger.status`` (routing/README.md,
    "Idempotency"). ``FAILED`` is released: the next claim of the key runs again."""

    CLAIMED = "claimed"
    DONE = "done"
    FAILED = "failed"
    UNKNOWN = "unknown"  # it may have happened: kept, never replayed


class ErrorCode(StrEnum):
    """``code`` of the gateway's error body (``routing.responses``) and of a stream's error
    event. A run's codes are also ``GatewayResult.error_code``, the request event's
    ``error_code`` column and the ``code`` label of the error metric; the refusals before
    a run (a bad header or body, auth, an idempotency key) are only ever answered."""

    # A gateway run's.
    DEADLINE_EXHAUSTED = "deadline_exhausted"
    ATTEMPT_BUDGET_EXHAUSTED = "attempt_budget_exhausted"
    ALL_ROUTES_SUPPRESSED = "all_routes_suppressed"
    NO_ELIGIBLE_ROUTE = "no_eligible_route"
    PERMANENT_FAILURE = "permanent_failure"
    FALLBACKS_EXHAUSTED = "fallbacks_exhausted"
    OUTCOME_UNKNOWN = "outcome_unknown"
    FAILED_AFTER_COMMIT = "failed_after_commit"
    REJECTED_AFTER_COMMIT = "rejected_after_commit"
    CLIENT_DISCONNECTED = "client_disconnected"
    # Every attempt failed for the request's own sake (a parameter no route can serve as
    # asked: routing.attribution.request_fault), or its provider preferences leave no
    # route (routing.provider_prefs): a 422 naming the field or header to change.
    REQUEST_UNSERVABLE = "request_unservable"
    # Refusals before a run.
    METHOD_NOT_ALLOWED = "method_not_allowed"
    UNAUTHORIZED = "unauthorized"
    INVALID_CONTRACT_HEADER = "invalid_contract_header"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    LENGTH_REQUIRED = "length_required"
    INVALID_JSON = "invalid_json"
    INVALID_REQUEST = "invalid_request"
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key"
    INVALID_EXPECTED_LANGUAGE = "invalid_expected_language"
    UNKNOWN_CONTRACT = "unknown_contract"
    INVALID_CONTRACT = "invalid_contract"
    IDEMPOTENCY_KEY_REQUIRED = "idempotency_key_required"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"


class SignalKind(StrEnum):
    """What the HTTP layer saw of a failed attempt (``routing.failures.Signal.kind``);
    ``routing.failures.classify`` says what it means."""

    HTTP_ERROR = "http_error"  # a non-2xx status with (maybe) an error body
    ERROR_BODY = "error_body"  # HTTP 200 whose body or stream carried an error object
    CONNECT = "connect"  # TCP/TLS could not be set up (nothing was sent)
    TIMEOUT = "timeout"  # no headers / no first content within the limit, or silence after output
    RESET = "reset"  # the connection closed before the stream finished
    NO_FINISH = "no_finish"  # the stream ended cleanly but without a finish_reason
    INVALID_BODY = "invalid_body"  # a body or SSE frame that is not the JSON we expect
    # A 200 event stream that closed cleanly with no SSE event, only bytes that are not SSE
    # (an HTML page): ``openrouter.notsse.malformed_stream``.
    MALFORMED_BODY = notsse.MALFORMED_BODY


class Blame(StrEnum):
    """Whose fault a failure is (``routing.failures.Failure.blame``): only a route's counts
    against its circuit breaker (issue point 8; field case 4)."""

    CLIENT = "client"  # a malformed request
    ACCOUNT = "account"  # our key: auth, payment
    ROUTE = "route"


class FailureReason(StrEnum):
    """The short machine code of a failure the gateway names itself: ``Failure.reason``,
    the attempt event's ``failure_reason``, ``reason`` in an error body's attempts and
    the ``check`` of a breaker's recorded failure. A reason may also be OpenRouter's own
    typed error code passed through (``routing.failures``), ``http_<status>``, or
    ``<signal kind>_after_output`` (``SignalKind``); those are not members."""

    # The upstream's reply, classified (``routing.failures.classify``).
    CONNECT = "connect"
    INVALID_BODY = "invalid_body"
    MALFORMED_BODY = notsse.MALFORMED_BODY
    FIRST_TOKEN_TIMEOUT = "first_token_timeout"  # noqa: S105 - a reason, not a password
    RESET = "reset"
    NO_FINISH = "no_finish"
    ERROR_CHUNK = "error_chunk"
    CONTEXT_OVERFLOW = "context_overflow"
    UNSUPPORTED = "unsupported"
    MODERATION = "moderation"
    AUTHENTICATION = "authentication"
    PAYMENT_REQUIRED = "payment_required"
    PERMISSION_DENIED = "permission_denied"
    ENDPOINT_UNAVAILABLE = "endpoint_unavailable"
    UNKNOWN_MODEL = "unknown_model"
    MALFORMED_REQUEST = "malformed_request"
    # A reply the gateway judged and refused (``routing.attribution.JUDGED_REASONS``).
    VALIDATION = "validation"
    PREFIX_REJECTED = "prefix_rejected"
    TRUNCATED_BY_MAX_TOKENS = "truncated_by_max_tokens"
    EMPTY_REPLY = "empty_reply"
    # A committed stream whose client left.
    CLIENT_DISCONNECTED = "client_disconnected"


class CutReason(StrEnum):
    """Why an attempt was cut short from outside its reading thread
    (``openrouter.transport.AttemptHandle.cut``, ``routing.gateway.upstream.cut_message``):
    the reading thread reports this instead of a connection error."""

    FIRST_TOKEN_TIMEOUT = "first_token_timeout"  # noqa: S105 - a reason, not a password
    ATTEMPT_TIMEOUT = "attempt_timeout"
    CANCELLED = "cancelled"  # another attempt won (a hedge loser)
    CLIENT_GONE = "client_gone"
    REJECTED = "rejected"  # the held prefix failed a check


class LanguageSource(StrEnum):
    """Where a request's expected language came from
    (``routing.conversation_language.ExpectedLanguage.source``); shown in the attempt
    event's ``validation`` text (``language: pt (assistant_turns)``)."""

    HEADER = "header"  # X-Expected-Language
    CONTRACT = "contract"  # the contract's expected_language
    ASSISTANT_TURNS = "assistant_turns"
    USER_TURN = "user_turn"
    NONE = "none"  # no sure reading: the reply is checked for mixing only


# The sources that make the expected language the request's own, not its contract's
# (``routing.attribution``: the request may then explain a language failure).
REQUEST_LANGUAGE_SOURCES = frozenset({LanguageSource.HEADER, LanguageSource.ASSISTANT_TURNS, LanguageSource.USER_TURN})


class CheckStage(StrEnum):
    """When a live check judged an attempt: the prefix of the keys of the attempt event's
    ``checks`` (``prefix.leading_garbage``) and of its ``validation`` summary
    (docs/live-evidence.md, "What counts")."""

    PREFIX = "prefix"  # the held prefix of a stream, before its commit point
    POST = "post"  # the whole reply, after the stream
    ANSWER = "answer"  # a whole answer that was not streamed, before it is accepted


class Workload(StrEnum):
    """A contract's ``workload`` (routing/README.md, "Contracts"): what the requests under it
    need of a route; shown in the contract admin."""

    TEXT = "text"
    STRUCTURED = "structured"
    TOOLS = "tools"
    VISION = "vision"
    LONG_CONTEXT = "long_context"


class OutputMode(StrEnum):
    """A contract's ``output_mode`` (routing/README.md, "Contracts"): free text, or a JSON
    object, or a JSON object under the contract's ``output_schema``."""

    NONE = "none"
    JSON_OBJECT = "json_object"
    JSON_SCHEMA = "json_schema"


class CommitMode(StrEnum):
    """A contract's ``stream_commit.mode``: ``buffer`` validates the whole answer before
    the first byte; ``prefix`` holds and judges a prefix, then passes the stream on
    (``routing.contracts.StreamCommit``)."""

    BUFFER = "buffer"
    PREFIX = "prefix"


class FinishReason(StrEnum):
    """An answer's ``finish_reason`` as OpenAI-compatible upstreams send it (and the
    gateway passes on); a contract's ``finish_reasons`` lists those it accepts
    (``routing.contracts.FINISH_REASONS``). ``ERROR`` is OpenRouter's for an error after
    generation started (docs/fleet-format.md, ``midstream_error``): never accepted."""

    STOP = "stop"
    LENGTH = "length"
    TOOL_CALLS = "tool_calls"
    CONTENT_FILTER = "content_filter"
    ERROR = "error"
