"""The Celery broker's transport: kombu's Redis transport, with a closed connection
reported as the connection error it is.

Celery 5.7 closes a broken broker connection twice when Redis goes away mid-round
(``Consumer.on_connection_error_after_connected``: ``collect()`` detaches the transport
from its ``Connection``, then ``close()`` closes the channel again). Closing a channel
that still holds unacknowledged messages restores them through a new Redis client, whose
parameters kombu 5.7 reads from the detached ``Connection``: ``AttributeError: 'NoneType'
object has no attribute 'hostname'``. That error is not one of the transport's
connection errors, so ``kombu.common.ignore_errors`` lets it through and the worker exits
with status 1 for good; a task finishing after the reconnect dies the same way when it
acknowledges on the old channel. Seen with celery/kombu 5.7.0 (the same traceback, from
an older cause, is kombu's GitHub report "Error on restarting Gossip"); no fixed release
exists yet.

Here the detached channel raises ``redis.exceptions.ConnectionError`` instead: the close
is ignored as a close of a dead connection is, an acknowledgement of a message of the
old connection is logged ("Couldn't ack") and dropped, and the consumer reconnects.
Nothing is lost that was not already: a broker that restarted empty lost those messages
with it, and one that kept its data (append-only file) redelivers them after the
visibility timeout, as for a dead worker.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

# Celery's ``broker_transport`` setting (CELERY_BROKER_TRANSPORT in settings.py).
TRANSPORT = "reverie_ops.broker:Transport"


class DetachedChannelError(RedisConnectionError):
    """A channel of a broker connection that was already closed was asked for a client."""


class Channel(kombu_redis.Channel):
    """kombu's Redis channel; on a detached connection, a connection error (not
    ``AttributeError``) when it needs a new client."""

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise DetachedChannelError("the broker connection of this channel is closed")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]  # not in the stubs
        return params


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with ``Channel`` above (redis:// and rediss:// URLs)."""

    Channel = Channel


def broker_transport(url: str) -> str | None:
    """The ``broker_transport`` for a broker URL: ``TRANSPORT`` for ``redis://`` and
    ``rediss://`` (kombu's own Redis transport otherwise reads them), None for any other
    scheme (kombu picks its transport by the scheme)."""
    return TRANSPORT if url.startswith(("redis://", "rediss://")) else None
