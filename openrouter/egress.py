"""Which proxy, if any, a request to an origin leaves through: the standard environment.

A deployment behind corporate or cluster egress names its proxy in ``HTTPS_PROXY`` /
``HTTP_PROXY`` (``ALL_PROXY`` for both) and the hosts reached directly in ``NO_PROXY``, in
upper or lower case: the convention curl, pip, requests and httpx follow. The rule read
here is Python's own (``urllib.request.getproxies_environment`` and
``proxy_bypass_environment``), so no reading of these variables is ours.

``EgressTransport`` is an httpx transport that hands each request to the transport of
its origin's proxy (or the direct one), built on first use by the caller's factory; the
probes' aiohttp session asks ``ProxyRule`` per request. So every wire of ``openrouter``
(discovery, the probes, the gateway) follows one rule. ``ProxyRule.off()`` ignores the environment (setting
``OPENROUTER_PROXY_FROM_ENV``).
"""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import httpx

_T = TypeVar("_T")
_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class ProxyRule:
    """The proxy URL for ``http://`` and for ``https://`` requests (None: direct) and the
    ``NO_PROXY`` value (hosts, domain suffixes, ``*``). Hashable: a cache key.

    ``proxy_for(url)`` is the proxy URL for an ``httpx.URL`` or None (direct). Raises
    ``ValueError`` at construction for a proxy URL that is not ``http://`` or
    ``https://`` with a host (SOCKS needs an extra the project does not carry), naming
    the variable.
    """

    http: str | None = None
    https: str | None = None
    no_proxy: str = ""

    def __post_init__(self) -> None:
        for scheme, url in (("http", self.http), ("https", self.https)):
            if url is None:
                continue
            try:
                parsed = httpx.URL(url)
            except httpx.InvalidURL:
                parsed = httpx.URL()
            if parsed.scheme not in _SCHEMES or not parsed.host:
                raise ValueError(
                    f"{scheme.upper()}_PROXY={url!r} is not an http:// or https:// proxy URL with a host "
                    "(set OPENROUTER_PROXY_FROM_ENV=false to ignore the proxy environment)"
                )

    @classmethod
    def from_environment(cls) -> ProxyRule:
        """The rule of the process environment, read as Python reads it (lower case wins
        over upper; ``ALL_PROXY`` serves a scheme without its own)."""
        found = urllib.request.getproxies_environment()
        every = found.get("all") or None
        return cls(http=found.get("http") or every, https=found.get("https") or every, no_proxy=found.get("no", ""))

    @classmethod
    def off(cls) -> ProxyRule:
        """Every request direct, whatever the environment says."""
        return cls()

    def proxy_for(self, url: httpx.URL) -> str | None:
        proxy = self.https if url.scheme == "https" else self.http if url.scheme == "http" else None
        if proxy is None:
            return None
        host = url.host if url.port is None else f"{url.host}:{url.port}"
        # CPython's own NO_PROXY matcher (urllib.request, since 2.7; typeshed omits it).
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
        if self.no_proxy and bypass(host, {"no": self.no_proxy}):
            return None
        return proxy


def rule(from_env: bool) -> ProxyRule:
    """The environment's rule when ``from_env``, else ``ProxyRule.off()``."""
    return ProxyRule.from_environment() if from_env else ProxyRule.off()


class _Routes(Generic[_T]):
    """One transport per proxy (None: direct), made on first use; thread-safe."""

    def __init__(self, make: Callable[[str | None], _T], proxy_rule: ProxyRule) -> None:
        self._make = make
        self._rule = proxy_rule
        self._by_origin: dict[tuple[str, str, int | None], _T] = {}
        self._by_proxy: dict[str | None, _T] = {}
        self._lock = threading.Lock()

    def for_url(self, url: httpx.URL) -> _T:
        key = (url.scheme, url.host, url.port)
        found = self._by_origin.get(key)
        if found is None:
            proxy = self._rule.proxy_for(url)
            with self._lock:
                found = self._by_proxy.get(proxy)
                if found is None:
                    found = self._by_proxy[proxy] = self._make(proxy)
                self._by_origin[key] = found
        return found

    def made(self) -> list[_T]:
        with self._lock:
            return list(self._by_proxy.values())


class EgressTransport(httpx.BaseTransport):
    """An httpx transport sending each request through its origin's proxy transport.

    ``make(proxy_url_or_None)`` builds the transport for one proxy (or the direct one);
    it is called once per distinct proxy. ``proxy_rule`` decides per origin.
    """

    def __init__(self, make: Callable[[str | None], httpx.BaseTransport], proxy_rule: ProxyRule) -> None:
        self._routes: _Routes[httpx.BaseTransport] = _Routes(make, proxy_rule)

    def transport_for(self, url: httpx.URL) -> httpx.BaseTransport:
        return self._routes.for_url(url)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._routes.for_url(request.url).handle_request(request)

    def close(self) -> None:
        for transport in self._routes.made():
            transport.close()
