"""The gateway's door under ASGI: ``routing.api.chat_completions_view`` on a thread pool,
its event stream handed to the event loop chunk by chunk.

The gateway (upstream HTTP, breakers, events) is synchronous; this view runs the sync
view on a pool of ``ROUTING_ASGI_THREADS`` threads (not asgiref's default pool of
cpu + 4 threads: 50 streams holding their prefix would queue behind six) and, for a
committed stream, one pool thread reads the sync iterator and puts each chunk on an
``asyncio.Queue`` for the server to send. A client that leaves cancels the async
iterator; the reader thread then closes the sync one, which cancels the upstream request
(``routing.gateway_result.Committed``), as under WSGI.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from routing.api import chat_completions_view

_pool = ThreadPoolExecutor(max_workers=int(getattr(settings, "ROUTING_ASGI_THREADS", 64)),
                           thread_name_prefix="routing-asgi")
_END = object()


@csrf_exempt  # a machine API with bearer tokens, as the sync view
async def chat_completions_async_view(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """``POST /v1/chat/completions`` under ASGI: the same answers as the sync view."""
    response = await sync_to_async(chat_completions_view, thread_sensitive=False, executor=_pool)(request)
    if isinstance(response, StreamingHttpResponse) and not response.is_async:
        # The reader thread closes the sync iterator itself (closing it from the loop
        # while the thread is inside it would fail): take its closers over.
        closers: list[Callable[[], None]] = response._resource_closers  # type: ignore[attr-defined]  # noqa: SLF001 - Django keeps them private
        taken = list(closers)
        closers.clear()
        sync_chunks: Iterator[Any] = iter(response.streaming_content)  # type: ignore[arg-type]  # not is_async: a sync iterator
        response.streaming_content = _bridged(sync_chunks, taken)
    return response


async def _bridged(chunks: Iterator[Any], closers: list[Callable[[], None]]) -> AsyncIterator[Any]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def read() -> None:
        try:
            for chunk in chunks:
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
                if stop.is_set():
                    break
        finally:
            for close in closers:
                close()
            loop.call_soon_threadsafe(queue.put_nowait, _END)

    _pool.submit(read)
    try:
        while (chunk := await queue.get()) is not _END:
            yield chunk
    finally:
        stop.set()
