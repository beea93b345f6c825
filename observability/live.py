"""Live evidence metrics, read from the live scorecard at scrape time
(docs/live-evidence.md): the gateway's judged replies and check failures per endpoint
in the current window, and the suspects per model.

Label sets are bounded: the models the gateway scored, their endpoints' tags and the
check names the canary's judges emit. Gauges, not counters: a window slides.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from canary.live.scorecard import Scorecard
from observability.exposition import Family

log = logging.getLogger(__name__)


class LiveCollector:
    """Scrape-time live evidence gauges; ``card()`` is read per scrape, ``wall`` in epoch s."""

    def __init__(self, card: Callable[[], Scorecard], wall: Callable[[], float] = time.time) -> None:
        self.card = card
        self.wall = wall

    def collect(self) -> list[Family]:
        """The live families; only ``reverie_live_scorecard_up`` 0 when Redis cannot be read."""
        judged = Family("reverie_live_check_judged", "gauge",
                        "Live replies the gateway judged per endpoint and check in the current window",
                        ("model", "endpoint", "check"))
        failed = Family("reverie_live_check_failures", "gauge",
                        "Live check failures per endpoint and check in the current window",
                        ("model", "endpoint", "check"))
        suspects = Family("reverie_live_suspects", "gauge", "Endpoints suspected on live evidence per model", ("model",))
        up = Family("reverie_live_scorecard_up", "gauge", "1 when the live scorecard could be read")
        try:
            card = self.card()
            now = self.wall()
            for model in card.models():
                window = card.window(model, now)
                for tag, checks in sorted(window.counts.items()):
                    for check, tally in sorted(checks.items()):
                        judged.add((model, tag, check), tally.n)
                        failed.add((model, tag, check), tally.failed)
                suspects.add((model,), len(card.suspects(model)))
        except Exception as exc:  # noqa: BLE001 - a scrape must answer without Redis
            log.error("live scorecard unavailable: %s", exc)
            up.add((), 0)
            return [up]
        up.add((), 1)
        return [judged, failed, suspects, up]
