"""The live scorecard: the gateway's check verdicts per endpoint, check and model in
sliding windows shared by every web worker (Redis), and the suspects they made.

No Django: the Redis client and the time (epoch seconds) are arguments.

Layout under ``prefix`` (default ``live``), one model id ``M``:

- ``{prefix}:w:{M}:{bucket}``: a hash per ``BUCKET_S``-second bucket; fields
  ``{tag}\\t{check}\\tn`` (judged) and ``{tag}\\t{check}\\tf`` (failed), and for failures
  ``{tag}\\t{check}\\tl\\t{language}``; expires a window after its bucket;
- ``{prefix}:streak:{M}``: tag -> commit-point failures in a row, ``{tag}\\tcheck`` ->
  the last one's check (a passing commit point sets it to 0);
- ``{prefix}:suspects:{M}``: tag -> the suspect's JSON (``SuspectState``);
- ``{prefix}:models``: the models the gateway scored (what the sweep looks at).

A window read is one pipeline of ``HGETALL`` over its buckets: a bucket of 10 s and a
window of 10 minutes read 60 small hashes.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from canary.live.rule import Streak, Tally

BUCKET_S = 10
_SEP = "\t"
# One attempt's counts, its bucket's expiry, its streak and its model in one command (the
# gateway's event writer sends one per attempt, a second's requests in one pipeline): as
# HINCRBYs, one per check, packing and parsing a dozen commands per attempt cost about
# 0.3 ms of CPU per request (py-spy, bench/gateway.py). KEYS: the bucket hash, the streak hash, the
# models set. ARGV: the bucket's time to live (s), the model id, the streak move ("+": a
# commit-point failure, "0": a pass, "": none), the tag, the failed commit check, then the
# bucket's fields to count.
_RECORD = """
for i = 6, #ARGV do redis.call('HINCRBY', KEYS[1], ARGV[i], 1) end
if #ARGV >= 6 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if ARGV[3] == '+' then
  redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
  redis.call('HSET', KEYS[2], ARGV[4] .. '\t' .. 'check', ARGV[5])
elseif ARGV[3] == '0' then
  redis.call('HSET', KEYS[2], ARGV[4], 0)
end
redis.call('SADD', KEYS[3], ARGV[2])
return 0
"""


@dataclass(frozen=True)
class AttemptVerdicts:
    """What one gateway attempt says about one endpoint's quality.

    ``checks``: check name (``prefix.leading_garbage``, ``post.repetition``,
    ``answer.language``, ``validation``) -> passed; only checks that speak to the
    endpoint (the caller leaves out transport failures, request-caused refusals, client
    disconnects and relaxed checks). ``commit_failed``: the commit point rejected the
    reply (True), passed it (False), or there was none (None). ``language``: the
    language the reply had to be in (ISO 639-1), or None.
    """

    model_id: str
    tag: str
    checks: Mapping[str, bool]
    commit_failed: bool | None = None
    commit_check: str = ""
    language: str | None = None


@dataclass
class Window:
    """One model's window: ``counts`` (tag -> check -> ``Tally``), ``languages`` (tag ->
    check -> language -> failures), ``since_s`` (epoch s, the window's first bucket)."""

    counts: dict[str, dict[str, Tally]]
    languages: dict[str, dict[str, Counter[str]]]
    since_s: float


@dataclass
class SuspectState:
    """A suspect as stored: the evidence that made it (``check``, ``kind``, ``reason``,
    ``tally``/``peers`` as ``[n, failed]``, ``language`` of its failures), ``since_s``
    (epoch s), the confirmation rounds asked for (``confirmations``: round ids),
    ``next_confirm_s`` (epoch s when the next confirmation is due, 0 = none), and
    whether the gateway prefers its peers (``demoted``)."""

    check: str
    kind: str
    reason: str
    since_s: float
    tally: list[int] = field(default_factory=lambda: [0, 0])
    peers: list[int] = field(default_factory=lambda: [0, 0])
    language: str | None = None
    confirmations: list[int] = field(default_factory=list)
    next_confirm_s: float = 0.0
    demoted: bool = True

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str | bytes) -> SuspectState:
        data = json.loads(raw)
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class Scorecard:
    """The scorecard on one Redis client (``redis.Redis``), keys under ``prefix``;
    ``window_s``: the sliding window (s, a multiple of ``BUCKET_S`` is read)."""

    def __init__(self, client: Any, *, prefix: str = "live", window_s: float = 600.0) -> None:
        self.client = client
        self.prefix = prefix
        self.window_s = window_s
        self._record = client.register_script(_RECORD)

    def _bucket(self, now_s: float) -> int:
        return int(now_s // BUCKET_S)

    def record(self, verdicts: Iterable[AttemptVerdicts], now_s: float) -> int:
        """Count each attempt's verdicts into ``now_s``'s bucket (epoch s) and move its
        endpoint's commit-point streak (``record_many`` with one entry). Returns the
        verdicts counted. Raises ``redis.RedisError`` when Redis is away."""
        return self.record_many([(now_s, verdicts)])

    def record_many(self, batch: Iterable[tuple[float, Iterable[AttemptVerdicts]]]) -> int:
        """Count several requests' verdicts, each ``(now_s, verdicts)`` into its own
        ``now_s``'s bucket (epoch s), in order: one script call (``_RECORD``) per attempt,
        all in one pipeline, so a batch of a second's requests is one round trip (plus
        redis-py's check that the script is loaded). Returns the verdicts counted. Raises
        ``redis.RedisError`` when Redis is away (the caller decides to go on)."""
        ttl = int(self.window_s + 2 * BUCKET_S)
        counted = 0
        pipe = self.client.pipeline(transaction=False)
        calls = 0
        for now_s, verdicts in batch:
            bucket = self._bucket(now_s)
            for v in verdicts:
                fields = []
                for check, passed in v.checks.items():
                    base = f"{v.tag}{_SEP}{check}{_SEP}"
                    fields.append(base + "n")
                    if not passed:
                        fields.append(base + "f")
                        if v.language:
                            fields.append(f"{base}l{_SEP}{v.language}")
                    counted += 1
                streak = "+" if v.commit_failed is True else "0" if v.commit_failed is False else ""
                self._record(keys=[f"{self.prefix}:w:{v.model_id}:{bucket}", f"{self.prefix}:streak:{v.model_id}",
                                   f"{self.prefix}:models"],
                             args=[ttl, v.model_id, streak, v.tag, v.commit_check, *fields], client=pipe)
                calls += 1
        if calls:
            pipe.execute()
        return counted

    def models(self) -> list[str]:
        """The models the gateway has scored, sorted."""
        return sorted(m.decode() if isinstance(m, bytes) else m for m in self.client.smembers(f"{self.prefix}:models"))

    def window(self, model_id: str, now_s: float) -> Window:
        """The window of ``model_id`` ending at ``now_s``: the last ``window_s`` seconds
        of buckets, the current one included."""
        last = self._bucket(now_s)
        first = last - int(self.window_s // BUCKET_S) + 1
        pipe = self.client.pipeline(transaction=False)
        for bucket in range(first, last + 1):
            pipe.hgetall(f"{self.prefix}:w:{model_id}:{bucket}")
        n: dict[tuple[str, str], int] = defaultdict(int)
        f: dict[tuple[str, str], int] = defaultdict(int)
        languages: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        for fields in pipe.execute():
            for raw_key, raw_value in fields.items():
                parts = (raw_key.decode() if isinstance(raw_key, bytes) else raw_key).split(_SEP)
                value = int(raw_value)
                if len(parts) == 3 and parts[2] == "n":
                    n[(parts[0], parts[1])] += value
                elif len(parts) == 3 and parts[2] == "f":
                    f[(parts[0], parts[1])] += value
                elif len(parts) == 4 and parts[2] == "l":
                    languages[parts[0]][parts[1]][parts[3]] += value
        counts: dict[str, dict[str, Tally]] = defaultdict(dict)
        for (tag, check), judged in n.items():
            counts[tag][check] = Tally(judged, min(judged, f.get((tag, check), 0)))
        return Window(dict(counts), {t: dict(c) for t, c in languages.items()}, first * BUCKET_S)

    def streaks(self, model_id: str) -> dict[str, Streak]:
        """Tag -> its current commit-point failure ``Streak``."""
        raw = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
               for k, v in self.client.hgetall(f"{self.prefix}:streak:{model_id}").items()}
        return {tag: Streak(int(value), raw.get(f"{tag}{_SEP}check", "")) for tag, value in raw.items()
                if _SEP not in tag}

    # ------------------------------------------------------------------ suspects

    def suspects(self, model_id: str) -> dict[str, SuspectState]:
        """Tag -> ``SuspectState`` of the model's current suspects."""
        raw = self.client.hgetall(f"{self.prefix}:suspects:{model_id}")
        return {(k.decode() if isinstance(k, bytes) else k): SuspectState.from_json(v) for k, v in raw.items()}

    def suspect_put(self, model_id: str, tag: str, state: SuspectState) -> None:
        self.client.hset(f"{self.prefix}:suspects:{model_id}", tag, state.as_json())

    def suspect_drop(self, model_id: str, tag: str) -> bool:
        """Clear a suspect (its demotion ends). True when there was one."""
        return bool(self.client.hdel(f"{self.prefix}:suspects:{model_id}", tag))

    def demoted(self, model_id: str) -> frozenset[str]:
        """Lower-cased tags of the model's suspects the gateway prefers peers over."""
        return frozenset(tag.casefold() for tag, state in self.suspects(model_id).items() if state.demoted)

    def streak_reset(self, model_id: str, tag: str) -> None:
        """Start a cleared endpoint's commit-point streak again from 0."""
        self.client.hset(f"{self.prefix}:streak:{model_id}", tag, 0)
