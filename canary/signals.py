"""Signals the canary sends, so packages above it (observability) can react to a round
without the canary importing them.

``round_finalised``: sent once when a round's verdicts and actions are stored, with
``round_id`` (int). Receivers must not raise: the round is already final.
"""

from __future__ import annotations

from django.dispatch import Signal

round_finalised = Signal()
