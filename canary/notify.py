"""The one place that talks to apprise (notification transports)."""

from __future__ import annotations

from collections.abc import Sequence


class DeliveryError(Exception):
    """Apprise could not deliver to any configured destination."""


def deliver(urls: Sequence[str], title: str, body: str) -> None:
    """Send ``title``/``body`` to every apprise URL in ``urls``.

    Raises DeliveryError when a URL is invalid or apprise reports a failed delivery.
    """
    import apprise

    app = apprise.Apprise()
    for url in urls:
        if not app.add(url):
            raise DeliveryError(f"invalid apprise URL: {url.split('://')[0]}://…")
    if not app.notify(title=title, body=body):
        raise DeliveryError("apprise reported a failed delivery")
