"""Contracts, the writes and the per-process cache: ``contract_version_create``,
``contracts_load_files`` (and ``_file``), ``contract_model_classes``, ``contracts_with_output``, ``contract_get``
(cached: versions are immutable; ``contracts_cache_clear`` drops this process's copies).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from routing.contracts import (
    FILE_FORMAT,
    Contract,
    ContractError,
    contract_entry_check,
    contract_file_read,
    contract_from_dict,
    file_names_unique,
    file_version_check,
)
from routing.models import ContractVersion, Route


class ContractNotFound(LookupError):
    """No contract version with that name and version."""


def contract_version_create(spec: dict[str, Any], *, actor: str = "", note: str = "") -> ContractVersion:
    """Store ``spec`` as the next version of its contract (``spec["name"]``).

    The version number is assigned here (latest + 1) and written into the stored spec.
    Raises ``ContractError`` when the spec is not a valid contract.
    """
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ContractError("a contract needs a 'name'")
    name = spec["name"]
    with transaction.atomic():
        # Serialise version numbering per name; the unique constraint is the last guard.
        latest = ContractVersion.objects.select_for_update().filter(name=name).aggregate(v=Max("version"))["v"] or 0
        stored = {**spec, "version": latest + 1}
        contract_from_dict(stored)
        return ContractVersion.objects.create(
            name=name, version=latest + 1, spec=stored, note=note, created_by=actor, created_at=timezone.now()
        )


def contracts_load_file(path: str | Path, *, actor: str = "file") -> list[ContractVersion]:
    """``contracts_load_files([path])``: the versions created from one file."""
    return contracts_load_files([path], actor=actor)[0][1]


def contracts_load_files(
    paths: Sequence[str | Path], *, actor: str = "file", route_classes: set[str] | None = None
) -> list[tuple[str, list[ContractVersion]]]:
    """Load contract files (each JSON: one object or a list; ``contract_file_read``), in
    one transaction: a refused file leaves the stored contracts as they were, including
    the files before it. A contract whose content equals its latest stored version is
    skipped; any other becomes a new version. Each entry's ``version`` must be the one
    the load assigns (``file_version_check``) and a name appears once per file
    (``file_names_unique``). Returns ``[(path, created versions)]`` in order.
    Raises ``ContractError`` naming the file (and the entry, 0-based) on the first
    problem. ``route_classes``: when given, a new or changed contract's
    ``model_classes`` must each be one of them (``route_model_classes``): a class no route
    has leaves the contract answering 422 to every request."""
    loaded: list[tuple[str, list[ContractVersion]]] = []
    with transaction.atomic():
        for path in paths:
            loaded.append((str(path), _contracts_load_one(path, actor, route_classes)))
    return loaded


def route_model_classes() -> set[str]:
    """The model classes the routes hold (``Route.model_class``, blank ones left out)."""
    return set(Route.objects.exclude(model_class="").values_list("model_class", flat=True))


def _model_classes_check(entry: dict[str, Any], route_classes: set[str]) -> None:
    classes = entry.get("model_classes") or []
    unknown = [c for c in classes if isinstance(c, str) and c not in route_classes]
    if unknown:
        raise ContractError(f"model_classes: no route has the model class {unknown[0]!r} (the routes' classes: "
                            f"{sorted(route_classes)}); every request would be refused with 422. Add the route first, or load "
                            "with --allow-unknown-model-classes")


def _contracts_load_one(path: str | Path, actor: str, route_classes: set[str] | None) -> list[ContractVersion]:
    entries, listed = contract_file_read(path)
    where = f"contracts file {path}"
    try:
        file_names_unique(entries)
    except ContractError as exc:
        raise ContractError(f"{where}: {exc}") from exc
    created: list[ContractVersion] = []
    for i, entry in enumerate(entries):
        # A file of one object has no entries to count: say what the object was read as.
        at = f"{where} entry {i}" if listed else f"{where} (one contract object; {FILE_FORMAT})"
        try:
            name = entry.get("name")
            latest = ContractVersion.objects.filter(name=name).order_by("-version").first() if isinstance(name, str) else None
            same = latest is not None and (
                {k: v for k, v in latest.spec.items() if k != "version"} == {k: v for k, v in entry.items() if k != "version"}
            )
            assigned = latest.version if same and latest else (latest.version + 1 if latest else 1)
            if not same:
                # A bad value is named before the version: the version check would
                # otherwise speak first of a changed contract whose change is the mistake.
                contract_entry_check(entry, assigned)
                if route_classes is not None:
                    _model_classes_check(entry, route_classes)
            file_version_check(entry, assigned)
            if same:
                continue
            created.append(contract_version_create(dict(entry), actor=actor, note=f"loaded from {Path(path).name}"))
        except ContractError as exc:
            raise ContractError(f"{at}: {exc}") from exc
    return created



def contract_model_classes() -> set[str]:
    """The model classes the latest version of some contract names in ``model_classes``."""
    latest: dict[str, dict[str, Any]] = {}
    for row in ContractVersion.objects.order_by("name", "version"):
        latest[row.name] = row.spec
    return {c for spec in latest.values() for c in (spec.get("model_classes") or []) if isinstance(c, str)}


def contracts_with_output(mode: str) -> list[str]:
    """``name@version`` of each contract whose latest version's ``output_mode`` is ``mode``
    (``json_object``, ``json_schema``), sorted: where a caller's ``response_format`` of
    that mode is taken (routing/README.md, "Structured output: the contract's schema, or
    a 400"). Read only when a request is refused for one."""
    latest: dict[str, tuple[int, Any]] = {}
    for name, version, spec in ContractVersion.objects.order_by("name", "version").values_list("name", "version", "spec"):
        latest[name] = (version, spec.get("output_mode") if isinstance(spec, dict) else None)
    return [f"{name}@{version}" for name, (version, output_mode) in sorted(latest.items()) if output_mode == mode]


def _nearest(name: str) -> str:
    """A hint for a contract asked for that does not exist: the versions of the contract of
    that name in another case or at another version ("; known: roleplay-reply@1,
    roleplay-reply@2"), or "" when no name matches. Names are matched case-insensitively,
    as model ids are; the lookup itself stays exact (a contract name is an identifier)."""
    known = [f"{n}@{v}" for n, v in ContractVersion.objects.filter(name__iexact=name)
             .order_by("name", "version").values_list("name", "version")]
    return f"; known: {', '.join(known)}" if known else ""


_contracts: dict[tuple[str, int], Contract] = {}
_contracts_lock = threading.Lock()


def contract_get(name: str, version: int) -> Contract:
    """The parsed contract ``name@version`` (cached: versions are immutable). Marks the
    version as in use on first use. Raises ``ContractNotFound``."""
    key = (name, version)
    with _contracts_lock:
        cached = _contracts.get(key)
    if cached is not None:
        return cached
    row = ContractVersion.objects.filter(name=name, version=version).first()
    if row is None:
        raise ContractNotFound(f"no contract {name}@{version}{_nearest(name)}")
    contract = contract_from_dict(row.spec)
    if row.first_used_at is None:
        ContractVersion.objects.filter(pk=row.pk, first_used_at__isnull=True).update(first_used_at=timezone.now())
    with _contracts_lock:
        _contracts[key] = contract
    return contract


def contracts_cache_clear() -> None:
    """Drop this process's parsed contracts (tests store new versions between cases)."""
    with _contracts_lock:
        _contracts.clear()
