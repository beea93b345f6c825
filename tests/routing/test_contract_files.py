"""The repo's contract file (one contract per workload class) loads, and loading it again
creates nothing new."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

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
