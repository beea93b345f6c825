"""The repo's contract file (one contract per workload class) loads, and loading it again
creates nothing new."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from routing.models import ContractVersion

FILE = Path(__file__).resolve().parents[2] / "routing" / "contract_files" / "workloads.json"


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
