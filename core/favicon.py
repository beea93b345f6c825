"""``/favicon.ico``: browsers ask every site for it; it sends them to the site's icon
(``core/static/core/favicon.svg``) instead of a 404 in every log."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static


def favicon_view(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """A permanent redirect (301) to the static SVG icon; raises nothing."""
    return HttpResponsePermanentRedirect(static("core/favicon.svg"))
