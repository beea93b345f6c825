"""Template filters that print numbers the way ``canary.formatting`` does everywhere."""

from __future__ import annotations

from typing import Any

from django import template

from canary import formatting

register = template.Library()


@register.filter
def percent(share: Any) -> str:
    """``{{ rate|percent }}``: a share in [0, 1] as ``60%`` (``canary.formatting.percent``)."""
    return formatting.percent(share)


@register.filter
def percent_of(part: Any, whole: Any) -> str:
    """``{{ part|percent_of:whole }}``: ``part / whole`` as a percentage."""
    return formatting.ratio_percent(part, whole)
