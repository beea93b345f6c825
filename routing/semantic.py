"""Named semantic checks a contract can require of an answer.

A check is a pure function ``(value, params) -> list[str]``: ``value`` is the parsed
structured output (a dict for JSON workloads, the text for plain ones), ``params`` the
contract's parameters for it; it returns the problems found ([] = passed). Checks never
repair anything: they only report.

Register more with ``@semantic_check("name")``; contracts naming an unknown check are
rejected when loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

SemanticCheck = Callable[[Any, Mapping[str, Any]], list[str]]
SEMANTIC_CHECKS: dict[str, SemanticCheck] = {}

# Active ISO 4217 alphabetic codes (ISO 4217 list one, 2024 edition), plus XAU/XAG
# precious metals excluded on purpose: an invoice is never priced in them.
ISO_4217: frozenset[str] = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL
    BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK
    DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS
    INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD
    MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR
    PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS
    SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW
    UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL""".split()
)


def semantic_check(name: str) -> Callable[[SemanticCheck], SemanticCheck]:
    """Decorator: register ``fn`` under ``name``. Raises ValueError on a duplicate name."""

    def register(fn: SemanticCheck) -> SemanticCheck:
        if name in SEMANTIC_CHECKS:
            raise ValueError(f"semantic check {name!r} is already registered")
        SEMANTIC_CHECKS[name] = fn
        return fn

    return register


def _number(value: Any) -> Decimal | None:
    # bool is an int in Python; true is not an amount.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        result = Decimal(str(value))
    except InvalidOperation:
        return None
    return result if result.is_finite() else None


def _items(value: Any, params: Mapping[str, Any]) -> list[Any] | None:
    if not isinstance(value, dict):
        return None
    items = value.get(params.get("items_field", "line_items"))
    return items if isinstance(items, list) else None


@semantic_check("invoice_totals_non_negative")
def invoice_totals_non_negative(value: Any, params: Mapping[str, Any]) -> list[str]:
    """The total and every line item amount are numbers >= 0.

    params: ``total_field`` (default "total"), ``items_field`` ("line_items"),
    ``amount_field`` ("amount").
    """
    if not isinstance(value, dict):
        return ["invoice_totals_non_negative: the answer is not an object"]
    total_field = params.get("total_field", "total")
    amount_field = params.get("amount_field", "amount")
    problems = []
    total = _number(value.get(total_field))
    if total is None:
        problems.append(f"{total_field} is not a number")
    elif total < 0:
        problems.append(f"{total_field} is negative ({total})")
    for i, item in enumerate(_items(value, params) or []):
        amount = _number(item.get(amount_field)) if isinstance(item, dict) else None
        if amount is None:
            problems.append(f"line item {i}: {amount_field} is not a number")
        elif amount < 0:
            problems.append(f"line item {i}: {amount_field} is negative ({amount})")
    return problems


@semantic_check("currency_code_valid")
def currency_code_valid(value: Any, params: Mapping[str, Any]) -> list[str]:
    """``value[field]`` (default "currency") is an active ISO 4217 code, upper case."""
    field = params.get("field", "currency")
    code = value.get(field) if isinstance(value, dict) else None
    if not isinstance(code, str) or code not in ISO_4217:
        return [f"{field} {code!r} is not an ISO 4217 currency code"]
    return []


@semantic_check("line_items_sum_to_total")
def line_items_sum_to_total(value: Any, params: Mapping[str, Any]) -> list[str]:
    """The line item amounts sum to the total within ``tolerance`` (default 0.01, the
    currency's smallest unit for most codes).

    params: ``total_field``, ``items_field``, ``amount_field`` as above, ``tolerance``.
    """
    if not isinstance(value, dict):
        return ["line_items_sum_to_total: the answer is not an object"]
    total = _number(value.get(params.get("total_field", "total")))
    items = _items(value, params)
    if total is None or items is None:
        return ["line_items_sum_to_total: total or line items missing"]
    amount_field = params.get("amount_field", "amount")
    amounts = [_number(i.get(amount_field)) if isinstance(i, dict) else None for i in items]
    if any(a is None for a in amounts):
        return ["line_items_sum_to_total: a line item amount is not a number"]
    tolerance = _number(params.get("tolerance", "0.01")) or Decimal("0.01")
    found = sum((a for a in amounts if a is not None), Decimal(0))
    if abs(found - total) > tolerance:
        return [f"line items sum to {found}, total is {total} (tolerance {tolerance})"]
    return []


@semantic_check("label_in_allowed_set")
def label_in_allowed_set(value: Any, params: Mapping[str, Any]) -> list[str]:
    """A classification label is one of ``params["allowed"]``.

    ``value`` is the label itself (plain-text workloads, surrounding whitespace already
    stripped) or an object holding it in ``params["field"]`` (default "label").
    """
    allowed = params.get("allowed")
    if not isinstance(allowed, list | tuple) or not allowed:
        return ["label_in_allowed_set: the contract gives no 'allowed' labels"]
    label = value.get(params.get("field", "label")) if isinstance(value, dict) else value
    if label not in allowed:
        return [f"label {label!r} is not one of {list(allowed)}"]
    return []
