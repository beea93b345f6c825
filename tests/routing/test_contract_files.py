"""The repo's contract file (one contract per workload class) loads, and loading it again
creates nothing new."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from routing.models import ContractVersion, Route

REPO = Path(__file__).resolve().parents[2]
FILE = REPO / "routing" / "contract_files" / "workloads.json"


@pytest.mark.django_db
def test_one_contract_per_workload_class_loads_once():
    out = StringIO()
    call_command("routing_contracts_load", str(FILE), stdout=out)
    workloads = sorted(ContractVersion.objects.values_list("spec__workload", flat=True))
    assert workloads == ["long_context", "structured", "text", "tools", "vision"]
    call_command("routing_contracts_load", str(FILE), stdout=out)
    assert ContractVersion.objects.count() == 5
    assert out.getvalue().strip().endswith("no change")


@pytest.mark.django_db
def test_the_command_refuses_a_file_whose_version_the_load_would_not_assign(tmp_path):
    entries = json.loads(FILE.read_text())
    path = tmp_path / "workloads.json"
    path.write_text(json.dumps([{**entries[0], "version": 7}]))
    with pytest.raises(CommandError, match="version 7 in the file, but the load would assign 1"):
        call_command("routing_contracts_load", str(path), stdout=StringIO())
    assert not ContractVersion.objects.exists()


def _refusal(*paths) -> str:
    with pytest.raises(CommandError) as info:
        call_command("routing_contracts_load", *[str(p) for p in paths], stdout=StringIO())
    return str(info.value)


@pytest.mark.django_db
def test_a_missing_file_or_a_directory_is_refused_naming_the_file(tmp_path):
    assert _refusal(tmp_path / "nope.json") == f"contracts file {tmp_path / 'nope.json'}: cannot read it: No such file or directory"
    assert _refusal(tmp_path) == f"contracts file {tmp_path}: cannot read it: Is a directory"


@pytest.mark.django_db
def test_a_file_that_is_not_utf8_is_refused_with_the_byte_offset(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('[{"name": "caf\xe9"}]'.encode("latin-1"))
    assert _refusal(path) == f"contracts file {path}: not UTF-8 text: byte 0xe9 at offset 14"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[\n  {"name": "chat",\n   "workload": "text",,\n  }\n]', "line 3, column 23: Expecting property name enclosed in double quotes"),
        ("", "line 1, column 1: the file is empty"),
        ("- name: chat\n  workload: text\n", "line 1, column 1: Expecting value (contract files are JSON, not YAML)"),
    ],
)
def test_bad_json_is_refused_with_line_and_column(tmp_path, text, where):
    path = tmp_path / ("contracts.yaml" if text.startswith("-") else "contracts.json")
    path.write_text(text)
    assert _refusal(path) == f"contracts file {path}: invalid JSON at {where}"


@pytest.mark.django_db
def test_one_bad_file_among_several_stores_nothing_from_any(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"name": "chat", "version": 1, "workload": "text"}]))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    message = _refusal(good, bad)
    assert message.startswith(f"contracts file {bad}: invalid JSON at line 1, column 2")
    assert not ContractVersion.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_command_exits_non_zero_with_one_line_and_the_stored_contracts_unchanged(tmp_path):
    call_command("routing_contracts_load", str(FILE), stdout=StringIO())
    before = sorted(ContractVersion.objects.values_list("name", "version"))
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps([{**json.loads(FILE.read_text())[0], "version": 2, "deadline_s": 99}]))
    s = connection.settings_dict
    env = {**os.environ, "DATABASE_URL": f"postgres://{s.get('USER') or 'postgres'}@{s['HOST']}:{s['PORT']}/{s['NAME']}"}
    done = subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, "manage.py", "routing_contracts_load", str(changed), str(tmp_path / "gone.json")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == f"CommandError: contracts file {tmp_path / 'gone.json'}: cannot read it: No such file or directory"
    assert sorted(ContractVersion.objects.values_list("name", "version")) == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("number", "why"),
    [("NaN", "NaN is not JSON"), ("-Infinity", "-Infinity is not JSON"), ("1e400", "1e400 is out of range for a number")],
)
def test_a_non_finite_number_nested_in_a_contract_is_refused_with_a_message(tmp_path, number, why):
    # Python's json reads these; PostgreSQL's JSON column refused them at INSERT, a traceback.
    path = tmp_path / "contracts.json"
    path.write_text('[{"name": "x", "version": 1, "workload": "structured", "output_mode": "json_schema",'
                    f' "output_schema": {{"type": "object", "maximum": {number}}}}}]')
    assert _refusal(path).startswith(f"contracts file {path}: invalid JSON: {why}")


@pytest.mark.django_db
def test_a_remote_ref_in_a_contract_file_is_refused_naming_the_file_and_the_json_path(tmp_path, schema_host):
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps([{"name": "remote", "version": 1, "workload": "structured",
                                 "output_mode": "json_schema",
                                 "output_schema": {"type": "object", "properties": {"a": {"$ref": schema_host.url}}}}]))
    assert _refusal(path) == (
        f"contracts file {path} entry 0: output_schema: $ref '{schema_host.url}' at $.properties.a"
        " does not resolve within the schema (references are never fetched)"
    )
    assert ContractVersion.objects.count() == 0
    assert schema_host.gets == 0


FORMAT = "a contracts file holds one contract object or a JSON list of them"


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "says"), [
    # Found by a new user's trial: this read "entry 0: a contract needs a 'name'".
    ('{"bad": 1}', f"(one contract object; {FORMAT}): unknown field(s) ['bad']; known fields: ["),
    ('{"workload": "text", "version": 1}', f"(one contract object; {FORMAT}): name: required"),
    ('["chat", "booking"]', f"entry 0: expected a contract object, got a string ('chat'); {FORMAT}"),
    ('[{"name": "chat", "version": 1, "workload": "text"}, 7]', f"entry 1: expected a contract object, got a number (7); {FORMAT}"),
    ("[]", f"an empty list holds no contract; {FORMAT}"),
    ('"chat"', f"{FORMAT}, got a string ('chat')"),
    ("null", f"{FORMAT}, got null"),
    ('[{"name": "chat", "version": 1, "workload": "text", "colour": "red"}]', "entry 0: unknown field(s) ['colour']; known fields: ["),
    ('[{"name": "chat", "version": 1, "workload": "text"}, {"version": 1, "workload": "text"}]', "entry 1: name: required"),
])
def test_a_malformed_contracts_file_says_what_is_wrong_and_where(tmp_path, text, says):
    path = tmp_path / "contracts.json"
    path.write_text(text)
    message = _refusal(path)
    assert message.startswith(f"contracts file {path}"), message
    assert says in message, message
    assert not ContractVersion.objects.exists()


@pytest.mark.django_db
def test_a_model_class_no_route_has_is_refused_naming_the_routes_classes(tmp_path):
    # Found by a new user's trial: ["chat-7000b"] loaded, then every request was a 422.
    Route.objects.create(name="alpha", model_id="m/a", model_class="chat-70b", context_length=8192)
    entry = json.loads(FILE.read_text())[0]
    assert entry["model_classes"] == ["chat-70b"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{**entry, "model_classes": ["chat-7000b"]}]))
    said = _refusal(path)
    assert "no route has the model class 'chat-7000b' (the routes' classes: ['chat-70b'])" in said
    assert not ContractVersion.objects.exists()
    call_command("routing_contracts_load", str(FILE), stdout=StringIO())  # chat-70b: the route's class
    assert ContractVersion.objects.count() == 5
    path.write_text(json.dumps([{**entry, "version": 2, "model_classes": ["chat-7000b"]}]))
    call_command("routing_contracts_load", str(path), "--allow-unknown-model-classes", stdout=StringIO())
    assert ContractVersion.objects.count() == 6


@pytest.mark.django_db
def test_before_any_route_has_a_class_the_classes_are_loaded_unchecked_and_said_so():
    err = StringIO()
    call_command("routing_contracts_load", str(FILE), stdout=StringIO(), stderr=err)
    assert "model_classes not checked: no route has a model class yet" in err.getvalue()
