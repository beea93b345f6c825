"""Values the simulator cannot serve sensibly are refused when the fleet is loaded, and the
keep-alive plan stays small whatever a programmatic fleet asks for."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fake_openrouter.fleet import (
    FleetError,
    fleet_from_dict,
    parse_fleet,
)
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
