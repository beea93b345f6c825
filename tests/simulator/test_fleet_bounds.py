"""Values the simulator cannot serve sensibly are refused when the fleet is loaded, and the
keep-alive plan stays small whatever a programmatic fleet asks for."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from fake_openrouter.draws import ServeCounter
from fake_openrouter.fleet import (
    MAX_PADDING_UNITS,
    MAX_TTFT_MS,
    Fleet,
    FleetError,
    fleet_from_dict,
    parse_fleet,
)
from fake_openrouter.wire import COMMENT
from fake_openrouter.world import Wait, Write, plan_chat
from tests.simulator.conftest import MODEL, endpoint, fleet

PATH = "models[0].endpoints[0]"


def errors_of(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(FleetError) as info:
        fleet_from_dict(data)
    return list(info.value.errors)


def test_a_tag_with_a_trailing_newline_is_refused() -> None:
    assert errors_of(fleet(endpoint("atlas/fp8\n"))) == [
        (f"{PATH}.tag", 'must look like slug/variant, got "atlas/fp8\\n"')
    ]


def test_a_model_id_with_a_trailing_newline_is_refused() -> None:
    data = fleet(endpoint("a/x"))
    data["models"][0]["id"] = MODEL + "\n"
    assert errors_of(data) == [("models[0].id", f'must look like author/slug, got "{MODEL}\\n"')]


def test_ids_differing_only_by_a_trailing_newline_are_refused_not_counted_as_distinct() -> None:
    data = fleet(endpoint("a/x"), endpoint("a/x\n"))
    assert [path for path, _ in errors_of(data)] == ["models[0].endpoints[1].tag"]


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ("fragment", "faults.leading_garbage.fragments[0]"),
        ("provider", "provider"),
        ("parameter", "supported_parameters[0]"),
    ],
)
def test_a_lone_surrogate_in_a_string_is_refused_with_its_path(where: str, path: str) -> None:
    entry = endpoint("a/x", faults={"leading_garbage": {"rate": 1, "fragments": ["MARK"]}})
    if where == "fragment":
        entry["faults"]["leading_garbage"]["fragments"] = ["MARK"]
    elif where == "provider":
        entry["provider"] = "MARK"
    else:
        entry["supported_parameters"] = ["MARK"]
    # JSON may spell a lone surrogate; json.loads gives a str that cannot be encoded as UTF-8.
    text = json.dumps(fleet(entry)).replace('"MARK"', '"\\ud800x"', 1)
    with pytest.raises(FleetError) as info:
        parse_fleet(text)
    assert info.value.errors == (
        (f"{PATH}.{path}", 'must be valid Unicode text (no lone surrogate), got "\\ud800x"'),
    )


@pytest.mark.parametrize(
    ("ttft", "path", "shown"),
    [
        (1e300, "faults.ttft_ms", "1e+300"),
        (MAX_TTFT_MS + 1, "faults.ttft_ms", str(MAX_TTFT_MS + 1)),
        ([0, 1e300], "faults.ttft_ms[1]", "1e+300"),
        ([1e17, 1e300], "faults.ttft_ms[0]", "1e+17"),
    ],
)
def test_a_ttft_longer_than_an_hour_is_refused_with_its_path_and_range(ttft: Any, path: str, shown: str) -> None:
    found = errors_of(fleet(endpoint("a/x", faults={"ttft_ms": ttft})))
    assert found[0] == (
        f"{PATH}.{path}", f"must be a number between 0 and {MAX_TTFT_MS} (one hour), got {shown}"
    )


def test_a_ttft_of_exactly_an_hour_is_still_accepted() -> None:
    loaded = fleet_from_dict(fleet(endpoint("a/x", faults={"ttft_ms": [0, MAX_TTFT_MS]})))
    assert loaded.models[0].endpoints[0].faults.ttft_ms == (0.0, float(MAX_TTFT_MS))


def slow_fleet(ttft_ms: float) -> Fleet:
    """A valid fleet whose one endpoint is then given ``ttft_ms``, as code (not a file) may."""
    loaded = fleet_from_dict(fleet(endpoint("a/x")))
    model = loaded.models[0]
    ep = model.endpoints[0]
    slow = dataclasses.replace(ep, faults=dataclasses.replace(ep.faults, ttft_ms=(ttft_ms, ttft_ms)))
    return dataclasses.replace(loaded, models=(dataclasses.replace(model, endpoints=(slow,)),))


def stream_plan_steps(ttft_ms: float) -> list[Any]:
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Go"}], "stream": True})
    return list(plan_chat(slow_fleet(ttft_ms), body.encode(), ServeCounter(), 1_700_000_000.0).steps)


def keepalive_part(steps: list[Any]) -> list[Any]:
    """The steps between the role chunk and the first content frame."""
    first = next(i for i, s in enumerate(steps) if isinstance(s, Write) and s.first_token)
    return steps[3:first]


def test_a_ttft_of_three_and_a_half_seconds_waits_with_a_comment_each_second() -> None:
    part = keepalive_part(stream_plan_steps(3500))
    assert part == [Wait(1.0), Write(COMMENT), Wait(1.0), Write(COMMENT), Wait(1.0), Write(COMMENT), Wait(0.5)]


def test_a_whole_number_of_seconds_ends_on_a_wait_not_a_comment() -> None:
    assert keepalive_part(stream_plan_steps(2000)) == [Wait(1.0), Write(COMMENT), Wait(1.0)]


# Before the bound, 1e300 ms looped for ever on a float that ``-= 1`` no longer changes
# (and grew the step list by about 90 MB/s): the timeout turns that into a failure.
@pytest.mark.timeout(3)
@pytest.mark.parametrize("ttft_ms", [1e20, 1e300])
def test_the_keepalive_plan_stays_bounded_for_any_wait_a_fleet_object_carries(ttft_ms: float) -> None:
    part = keepalive_part(stream_plan_steps(ttft_ms))
    waits = [s.seconds for s in part if isinstance(s, Wait)]
    assert len(part) <= 2 * MAX_TTFT_MS // 1000
    # Still a keep-alive wait: comments between waits, and the whole delay is waited.
    assert all(isinstance(s, Write) and s.data == COMMENT for s in part[1::2])
    assert sum(waits) == pytest.approx(ttft_ms / 1000)


def test_padding_above_its_bound_is_refused_and_the_bound_itself_accepted() -> None:
    assert errors_of(fleet(endpoint("a/x", wire={"padding": 10**6}))) == [
        (f"{PATH}.wire.padding", f"must be an integer between 0 and {MAX_PADDING_UNITS}, got 1000000")
    ]
    loaded = fleet_from_dict(fleet(endpoint("a/x", wire={"padding": MAX_PADDING_UNITS})))
    assert loaded.models[0].endpoints[0].wire.padding == MAX_PADDING_UNITS


@pytest.mark.parametrize(("faults", "where", "says"), [
    ({"tokens_per_s": 1e-300}, "faults.tokens_per_s", "must be at least 0.01 (a token every 100 s), got 1e-300"),
    ({"leading_garbage": {"rate": 1, "fragments": ["x" * 201]}}, "faults.leading_garbage.fragments[0]",
     "must be at most 200 characters (junk glued to a reply's start), got 201"),
])
def test_a_stream_that_never_ends_or_a_megabyte_fragment_is_refused(faults, where, says):
    with pytest.raises(FleetError) as info:
        fleet_from_dict(fleet(endpoint("a/x", faults=faults)))
    assert (f"models[0].endpoints[0].{where}", says) in info.value.errors
