"""Canary services: the writes. Tasks, API views, admin and commands call these; they call
the pure modules (probes, round judgement, policy, exclusions) and store what those decide.

Imports run one way, top to bottom, never back up:

- ``rounds``: open a round, sync its endpoints, finalise it (judge, then the policy);
- ``probes_run``: run and store an endpoint's probes (the task and the manual round);
- ``quarantine``: the suspension policy applied, manual overrides, exclusions;
- ``ignore_list``: the one place that builds and caches the merged ignore list;
- ``notifications``: rows, enqueued by task name after commit, delivered with retries;
- ``client``: the process's OpenRouter client and probe settings.
"""
