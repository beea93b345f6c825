"""The product backend's client of the ops app's ignore list (README.md beside this file).

Depends on httpx and the standard library only: nothing of the ops app is imported, so a
backend can install or vendor this package alone.
"""

from ignore_client.client import BadAnswer, IgnoreList, IgnoreListClient, TokenRejected

__all__ = ["BadAnswer", "IgnoreList", "IgnoreListClient", "TokenRejected"]
