"""Fleet files are validated strictly, and every refusal names the JSON path at fault."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from fake_openrouter.fleet import FleetError, fleet_from_dict, load_fleet, parse_fleet
from fake_openrouter.process import free_port
from tests.simulator.conftest import endpoint, fleet

SHARED_FLEETS = Path(__file__).resolve().parents[1] / "fixtures" / "fleets"


def refusal(data: Any) -> str:
    with pytest.raises(FleetError) as info:
        fleet_from_dict(data)
    return str(info.value)


@pytest.mark.parametrize("name", ["default.json", "three-hosts.json"])
def test_the_shared_example_fleets_are_accepted(name: str) -> None:
    loaded = load_fleet(SHARED_FLEETS / name)
    assert loaded.models[0].id == "meta-llama/llama-3.3-70b-instruct"


def test_default_fleet_is_read_into_typed_faults() -> None:
    loaded = load_fleet(SHARED_FLEETS / "default.json")
    by_tag = {e.tag: e for e in loaded.models[0].endpoints}
    assert len(by_tag) == 15
    assert by_tag["ember/bf16"].faults.ttft_ms == (11000.0, 14000.0)
    assert by_tag["fjord/fp8"].faults.http_error is not None
    assert by_tag["fjord/fp8"].faults.http_error.retry_after_s == 2.0
    assert by_tag["fjord/fp8"].wire.padding == 3
    assert by_tag["gale/fp8"].faults.structured_output == "missing_field"
    assert by_tag["atlas/fp8"].wire.usage_chunk == "repeat_finish"
    assert by_tag["cinder/fp8"].slug == "cinder"


def test_a_misspelled_fault_option_is_an_unknown_key_with_its_path() -> None:
    data = fleet(
        endpoint("a/x"),
        endpoint("b/x"),
        endpoint("c/x"),
        endpoint("d/x", faults={"leading_garbage": {"rte": 0.5}}),
    )
    # The typo is named first; the rate it should have been is missing, and said too.
    assert refusal(data) == (
        "models[0].endpoints[3].faults.leading_garbage.rte: unknown key\n"
        "models[0].endpoints[3].faults.leading_garbage.rate: required key is missing"
    )


def test_a_rate_above_one_is_refused_with_the_value() -> None:
    data = fleet(
        endpoint("a/x"), endpoint("b/x", faults={"http_error": {"rate": 1.5, "status": 429}})
    )
    assert refusal(data) == (
        "models[0].endpoints[1].faults.http_error.rate: must be a number between 0 and 1, got 1.5"
    )


@pytest.mark.parametrize(
    ("faults", "path", "fragment"),
    [
        ({"misbehave": {"rate": 1}}, "faults.misbehave", "unknown key"),
        ({"ttft_ms": [900, 100]}, "faults.ttft_ms", "min must not exceed max"),
        ({"ttft_ms": "fast"}, "faults.ttft_ms", "number or [min, max]"),
        ({"ttft_ms": [1, 2, 3]}, "faults.ttft_ms", "number or [min, max]"),
        (
            {"refusal": {"rate": 1, "style": "polite"}},
            "faults.refusal.style",
            "must be one of text, empty",
        ),
        ({"refusal": {"rate": 1}}, "faults.refusal.style", "required key is missing"),
        ({"structured_output": "maybe"}, "faults.structured_output", "must be one of ok, fenced"),
        (
            {"http_error": {"rate": 1, "status": 200}},
            "faults.http_error.status",
            "between 400 and 599",
        ),
        (
            {"http_error": {"rate": 1, "status": 429.5}},
            "faults.http_error.status",
            "between 400 and 599",
        ),
        (
            {"language_drift": {"rate": 1, "into": "xx"}},
            "faults.language_drift.into",
            "must be one of en, pt",
        ),
        ({"mojibake": {"rate": True}}, "faults.mojibake.rate", "between 0 and 1, got true"),
        ({"down": "yes"}, "faults.down", "true or false"),
        ({"tokens_per_s": 0}, "faults.tokens_per_s", "positive number"),
        (
            {"leading_garbage": {"rate": 1, "fragments": []}},
            "faults.leading_garbage.fragments",
            "at least one",
        ),
    ],
)
def test_bad_fault_values_are_refused_with_their_path(
    faults: dict[str, Any], path: str, fragment: str
) -> None:
    message = refusal(fleet(endpoint("a/x", faults=faults)))
    assert message.startswith(f"models[0].endpoints[0].{path}: "), message
    assert fragment in message


@pytest.mark.parametrize(
    ("wire", "path", "fragment"),
    [
        ({"usage_chunk": "last"}, "wire.usage_chunk", "empty_choices, repeat_finish, extra_choice"),
        ({"padding": -1}, "wire.padding", "integer >= 0"),
        ({"comments_between": 1}, "wire.comments_between", "true or false"),
        ({"error_chunk": "weird"}, "wire.error_chunk", "documented, observed"),
        ({"pading": 2}, "wire.pading", "unknown key"),
    ],
)
def test_bad_wire_values_are_refused_with_their_path(
    wire: dict[str, Any], path: str, fragment: str
) -> None:
    message = refusal(fleet(endpoint("a/x", wire=wire)))
    assert message.startswith(f"models[0].endpoints[0].{path}: "), message
    assert fragment in message


def test_endpoint_level_errors_name_their_path() -> None:
    bad_tag = fleet(endpoint("a/x"))
    bad_tag["models"][0]["endpoints"][0]["tag"] = "atlas"
    assert refusal(bad_tag).startswith("models[0].endpoints[0].tag: must look like slug/variant")

    duplicate = fleet(endpoint("a/x"), endpoint("A/X"))
    assert refusal(duplicate).startswith("models[0].endpoints[1].tag: duplicate tag")

    price = fleet(endpoint("a/x", prompt_price="cheap"))
    assert refusal(price).startswith(
        "models[0].endpoints[0].pricing.prompt: must be a decimal string"
    )

    numeric_price = fleet(endpoint("a/x"))
    numeric_price["models"][0]["endpoints"][0]["pricing"]["completion"] = 0.0000004
    assert refusal(numeric_price).startswith(
        "models[0].endpoints[0].pricing.completion: must be a decimal string"
    )

    quant = fleet(endpoint("a/x"))
    quant["models"][0]["endpoints"][0]["quantization"] = "fp7"
    assert refusal(quant).startswith("models[0].endpoints[0].quantization: must be one of")

    missing = fleet(endpoint("a/x"))
    del missing["models"][0]["endpoints"][0]["provider"]
    assert refusal(missing) == "models[0].endpoints[0].provider: required key is missing"


def test_a_fixed_reply_text_is_read_and_bounded() -> None:
    fixed = fleet(endpoint("a/x"))
    fixed["models"][0]["endpoints"][0]["reply_text"] = "ШЈШ№Ш±ШЁ"
    assert fleet_from_dict(fixed).models[0].endpoints[0].reply_text == "ШЈШ№Ш±ШЁ"
    assert fleet_from_dict(fleet(endpoint("a/x"))).models[0].endpoints[0].reply_text is None
    for bad, message in (("", "must be a non-empty string"), ("x" * 20_001, "must be at most 20000 characters")):
        fixed["models"][0]["endpoints"][0]["reply_text"] = bad
        assert refusal(fixed).startswith(f"models[0].endpoints[0].reply_text: {message}")


def test_top_level_errors_name_their_path() -> None:
    assert refusal({"seed": "7", "models": []}) == 'seed: must be an integer, got "7"'
    assert refusal({"seed": 7}) == "models: required key is missing"
    assert refusal({"seed": 7, "models": [], "extra": 1}) == "extra: unknown key"
    assert refusal([]).startswith("fleet must be an object")
    data = fleet(endpoint("a/x"))
    data["models"][0]["endpoints"][0]["faults"] = None
    assert refusal(data) == "models[0].endpoints[0].faults: must be an object, got null"
    two = fleet(endpoint("a/x"))
    two["models"].append(copy.deepcopy(two["models"][0]))
    assert refusal(two).startswith("models[1].id: duplicate model id")


def test_invalid_json_is_refused_with_line_and_column() -> None:
    text = json.dumps(fleet(endpoint("a/x")), indent=2).replace('"seed": 11,', '"seed": 11', 1)
    with pytest.raises(FleetError) as info:
        parse_fleet(text)
    assert str(info.value).startswith("invalid JSON at line 3, column 3: Expecting ',' delimiter")


@pytest.mark.parametrize("number", ["Infinity", "NaN", "1e400"])
def test_a_non_finite_number_is_refused_with_its_path_beside_the_other_errors(number: str) -> None:
    # Infinity was read as a wait for ever; refused at the key, the file's other errors still show.
    data = fleet(endpoint("a/x", faults={"ttft_ms": 5}))
    data["seed"] = "seven"
    text = json.dumps(data).replace('"ttft_ms": 5', f'"ttft_ms": {number}', 1)
    with pytest.raises(FleetError) as info:
        parse_fleet(text)
    paths = [path for path, _ in info.value.errors]
    assert "seed" in paths and any(path.endswith("faults.ttft_ms") for path in paths), info.value.errors


def many_errors() -> dict[str, Any]:
    data = fleet(
        endpoint("a/x", faults={"ttft_ms": "fast", "leading_garbage": {"rte": 0.5, "fragments": [1, "  "]}}),
        endpoint("b/x", wire={"padding": -1}),
        endpoint("c/x", faults={"http_error": {"rate": 1.5, "status": 200}}),
    )
    data["models"][0]["endpoints"][1]["tag"] = "b"
    del data["models"][0]["endpoints"][2]["provider"]
    data["models"].append({"id": "noslash", "endpoints": [endpoint("d/x", prompt_price="cheap"), endpoint("D/X")]})
    data["seed"] = "7"
    data["extra"] = True
    return data


MANY_ERRORS = [
    ("extra", "unknown key"),
    ("seed", 'must be an integer, got "7"'),
    ("models[0].endpoints[0].faults.ttft_ms", 'must be a number or [min, max], got "fast"'),
    ("models[0].endpoints[0].faults.leading_garbage.rte", "unknown key"),
    ("models[0].endpoints[0].faults.leading_garbage.rate", "required key is missing"),
    ("models[0].endpoints[0].faults.leading_garbage.fragments[0]", "must be a non-empty string, got 1"),
    ("models[0].endpoints[0].faults.leading_garbage.fragments[1]", 'must hold more than white space, got "  "'),
    ("models[0].endpoints[1].tag", 'must look like slug/variant, got "b"'),
    ("models[0].endpoints[1].wire.padding", "must be an integer >= 0, got -1"),
    ("models[0].endpoints[2].provider", "required key is missing"),
    ("models[0].endpoints[2].faults.http_error.status", "must be an integer between 400 and 599, got 200"),
    ("models[0].endpoints[2].faults.http_error.rate", "must be a number between 0 and 1, got 1.5"),
    ("models[1].id", 'must look like author/slug, got "noslash"'),
    ("models[1].endpoints[0].pricing.prompt", 'must be a decimal string, got "cheap"'),
    ("models[1].endpoints[1].tag", 'duplicate tag "D/X" in this model'),
]


def test_every_error_of_a_fleet_is_reported_in_one_pass_with_its_path() -> None:
    with pytest.raises(FleetError) as info:
        fleet_from_dict(many_errors())
    assert list(info.value.errors) == MANY_ERRORS
    assert str(info.value) == "\n".join(f"{path}: {problem}" for path, problem in MANY_ERRORS)
    # The first error is still the error's own path and problem.
    assert (info.value.path, info.value.problem) == MANY_ERRORS[0]


def test_the_simulator_command_refuses_a_fleet_with_every_error_before_it_listens(tmp_path: Path) -> None:
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(many_errors(), indent=2))
    with pytest.raises(CommandError) as info:
        call_command("fake_openrouter", "--fleet", str(path), "--port", str(free_port()))
    lines = str(info.value).splitlines()
    assert lines[0] == f"invalid fleet {path}: extra: unknown key"
    assert lines[1:] == [f"{p}: {q}" for p, q in MANY_ERRORS[1:]]


def test_a_single_error_reads_as_before() -> None:
    data = fleet(endpoint("a/x", faults={"http_error": {"rate": 1.5, "status": 429}}))
    with pytest.raises(FleetError) as info:
        fleet_from_dict(data)
    assert info.value.errors == (("models[0].endpoints[0].faults.http_error.rate", "must be a number between 0 and 1, got 1.5"),)


def test_a_key_named_twice_in_one_object_is_refused() -> None:
    # The last one won: a second, empty "faults" made a faulty host healthy, silently.
    text = ('{"seed": 1, "models": [{"id": "acme/m", "endpoints": [{"provider": "P", "tag": "p/fp8", '
            '"faults": {"mojibake": {"rate": 1}}, "faults": {}}]}]}')
    with pytest.raises(FleetError) as info:
        parse_fleet(text)
    assert "the key 'faults' appears twice in one object" in str(info.value)
