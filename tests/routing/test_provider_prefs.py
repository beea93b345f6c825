"""The client's provider preferences: read and checked at the door, routes that cannot meet
them left out before any attempt, and an upstream's refusal they explain attributed to the
request; a request that fails only for its own parameters names the one to change."""

from __future__ import annotations

import pytest

from openrouter.errors import ErrorInfo, parse_error_object
from routing.attribution import RequestParams, parameterised_by, provider_causes, request_fault
from routing.contracts import contract_from_dict
from routing.failures import Failure, FailureClass, classify_http
from routing.provider_prefs import (
    ProviderConstraints,
    ProviderInvalid,
    check_passed_on,
    constraints_of,
    route_misfit,
)
from routing.request_check import RequestInvalid, check_request
from routing.selection import fitting, rank
from tests.routing.conftest import route, user

CHAT = contract_from_dict({"name": "chat", "version": 1, "workload": "text"})


def refusal(status: int, message: str) -> Failure:
    return classify_http(status, ErrorInfo(code=status, message=message))


# ------------------------------------------------------------------ reading them


def test_constraints_read_prices_per_million_and_expand_quantization_families():
    c = constraints_of({"max_price": {"prompt": 0, "completion": "1.5"}, "quantizations": ["fp8", "int4"]})
    assert (c.max_price_prompt, c.max_price_completion) == (0.0, 1.5)
    assert c.quantizations == frozenset({"fp8", "mxfp8", "int4"})
    assert not constraints_of({"sort": "price"}).any and not constraints_of(None).any
    passed_on = {"sort": {"by": "throughput", "partition": "none"}, "data_collection": "deny", "zdr": True}
    assert not constraints_of(passed_on).any
    check_passed_on(passed_on)  # OpenRouter's shapes: nothing to refuse


@pytest.mark.parametrize(("provider", "path"), [
    ({"max_price": "free"}, "provider.max_price"),
    ({"max_price": {"prompt": "cheap"}}, "provider.max_price.prompt"),
    ({"max_price": {"completion": -1}}, "provider.max_price.completion"),
    ({"max_price": {"prompt": True}}, "provider.max_price.prompt"),
    # A misspelt ceiling capped nothing (a new user's trial); OpenRouter's own are checked too.
    ({"max_price": {"promt": 1}}, "provider.max_price.promt"),
    ({"max_price": {"request": -1}}, "provider.max_price.request"),
    ({"quantizations": "fp8"}, "provider.quantizations"),
    ({"quantizations": ["fp7"]}, "provider.quantizations"),
    # OpenRouter answers these with a 400 on every route alike (the trial's "cheapest").
    ({"sort": "cheapest"}, "provider.sort"),
    ({"sort": {"by": "fastest", "partition": "model"}}, "provider.sort.by"),
    ({"data_collection": "no"}, "provider.data_collection"),
    ({"zdr": "yes"}, "provider.zdr"),
])
def test_a_malformed_preference_is_a_400_naming_its_field(provider, path):
    with pytest.raises(ProviderInvalid) as err:
        constraints_of(provider)
        check_passed_on(provider)
    assert err.value.path == path
    with pytest.raises(RequestInvalid) as refused:
        check_request(user("Hi.", provider=provider), CHAT)
    assert refused.value.path == path


def test_openrouters_own_price_ceilings_pass_on_and_leave_the_gateways_alone():
    provider = {"max_price": {"request": 0, "image": "0.5", "audio": 1}}
    assert not constraints_of(provider).any
    check_request(user("Hi.", provider=provider), CHAT)


def test_max_tokens_with_max_completion_tokens_is_a_400_at_the_door():
    with pytest.raises(RequestInvalid) as err:
        check_request(user("Hi.", max_tokens=10, max_completion_tokens=100), CHAT)
    assert err.value.path == "max_tokens" and "max_completion_tokens" in str(err.value)
    hello = [{"role": "user", "content": "Hi."}]
    check_request({"messages": hello, "max_completion_tokens": 100}, CHAT)
    check_request({"messages": hello, "max_tokens": 100}, CHAT)


# ------------------------------------------------------------------ routes that cannot meet them


def test_a_route_above_the_price_limit_or_of_another_quantization_is_left_out():
    cheap, dear = route("cheap", price_prompt_usd=1e-7), route("dear", price_prompt_usd=3e-6)
    kept, misfits = fitting([cheap, dear], constraints_of({"max_price": {"prompt": 1}}))
    assert kept == [cheap] and misfits["dear"][0] == "provider.max_price.prompt"
    # 1e-7 USD per token is 0.1 per million exactly, not 0.1000000001.
    assert fitting([cheap], constraints_of({"max_price": {"prompt": 0.1}}))[0] == [cheap]
    fp8, bf16, unknown = route("a", quantization="fp8"), route("b", quantization="bf16"), route("c")
    kept, misfits = fitting([fp8, bf16, unknown], constraints_of({"quantizations": ["fp8"]}))
    # A route of unknown quantization stays a candidate: its endpoint decides.
    assert kept == [fp8, unknown] and misfits == {"b": ("provider.quantizations", "quantization bf16 not in provider.quantizations")}
    plain = route("own", provider_tag=None, base_url="http://host/v1", quantization="bf16")
    assert route_misfit(ProviderConstraints(quantizations=frozenset({"fp8"})), price_prompt_usd=0, price_completion_usd=0,
                        quantization=plain.quantization, pinned=False) is None


def test_a_route_of_unknown_price_never_passes_a_price_ceiling():
    known, unknown = route("known", price_prompt_usd=1e-7, price_completion_usd=1e-7), route("unknown", price_prompt_usd=None)
    kept, misfits = fitting([unknown, known], constraints_of({"max_price": {"prompt": 1}}))
    assert kept == [known]
    field, why = misfits["unknown"]
    assert field == "provider.max_price.prompt" and "prompt price unknown" in why and "$0" not in why and " 0 USD" not in why
    # Under a ceiling on the other price only, or without one, it stays a candidate.
    assert fitting([unknown], constraints_of({"max_price": {"completion": 1}}))[0] == [unknown]
    assert fitting([unknown], constraints_of({"quantizations": ["fp8"]}))[0] == [unknown]
    # Unknown is ranked after a known price, not as the cheapest.
    assert rank([unknown, known]) == [known, unknown]


# ------------------------------------------------------------------ refusals they explain


def test_openrouters_refusals_are_the_requests_only_for_the_preference_they_point_at():
    none_allowed = refusal(404, "No allowed providers are available for the selected model.")
    priced_out = refusal(404, "No endpoints found for vendor/model.")
    assert provider_causes(none_allowed, ("quantizations",)) == ("provider.quantizations",)
    assert provider_causes(priced_out, ("max_price", "sort")) == ("provider.max_price",)
    # Without the client's quantizations, "no allowed providers" is the pinned endpoint gone.
    assert provider_causes(none_allowed, ("max_price",)) == ()
    assert provider_causes(refusal(503, "No endpoints found for vendor/model."), ("max_price",)) == ()
    bad_sort = refusal(400, "provider.sort: expected one of price, throughput, latency")
    assert provider_causes(bad_sort, ("quantizations", "sort")) == ("provider.sort",)
    # OpenRouter's wrapper of any host's 400 says nothing of the client's preferences.
    assert provider_causes(refusal(400, "Provider returned error"), ("quantizations", "sort")) == ()
    params = RequestParams.of(user("Hi.", provider={"quantizations": ["int4"]}), request_language=False)
    assert parameterised_by(none_allowed, params, checks={}, finish_reason=None, has_tool_calls=False) == ("provider.quantizations",)
    assert parameterised_by(none_allowed, RequestParams(), checks={}, finish_reason=None, has_tool_calls=False) == ()
    assert parameterised_by(Failure(FailureClass.TRANSIENT, "http_503", "down", http_status=503), params, checks={},
                            finish_reason=None, has_tool_calls=False) == ()


def test_the_fault_names_where_the_caller_set_the_parameter():
    body = {"messages": [{"role": "user", "content": "Hi."}], "stop": ["*"], "max_completion_tokens": 5}
    assert request_fault([("stop",), ("stop",)], ["empty_reply", "empty_reply"], body, "none") == {
        "field": "stop", "parameter": "stop", "parameters": ["stop"], "check": "empty_reply"}
    assert request_fault([("language", "stop"), ("stop",)], ["language", "validation"], body, "header")["field"] == "stop"
    assert request_fault([("language",)], ["language"], body, "header")["header"] == "X-Expected-Language"
    assert request_fault([("language",)], ["language"], body, "assistant_turns")["field"] == "messages"
    assert request_fault([("max_tokens",)], ["truncated_by_max_tokens"], body, "none")["field"] == "max_completion_tokens"
    assert request_fault([("provider.quantizations",)], ["unknown_model"], body, "none")["field"] == "provider.quantizations"
    # One route failed for its own reason: the request is not only its own.
    assert request_fault([("stop",), ()], ["empty_reply", "http_503"], body, "none") is None
    assert request_fault([], [], body, "none") is None


@pytest.mark.parametrize("placement", ["error", "metadata"])
def test_openrouters_typed_availability_error_names_the_filters(placement):
    # Documented as error.availability; captures carried it in metadata: both are read.
    def filtered(*names: str) -> Failure:
        availability = {"code": "constraint_filtered", "retryable": False, "excluded_by": list(names)}
        obj = {"code": 404, "message": "No endpoints available",
               **({"availability": availability} if placement == "error" else {"metadata": {"availability": availability}})}
        return classify_http(404, parse_error_object(obj))

    assert filtered("quantization").excluded_by == ("quantization",)
    assert provider_causes(filtered("quantization", "max_price"), ("max_price", "quantizations")) == (
        "provider.quantizations", "provider.max_price")
    assert provider_causes(filtered("max_price"), ("quantizations",)) == ()
    # The gateway's own pin left no endpoint: the route's.
    assert provider_causes(filtered("allowed_providers"), ("quantizations",)) == ()
