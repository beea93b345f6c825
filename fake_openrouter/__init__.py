"""A faithful local fake of OpenRouter's API, driven by a fleet file (docs/fleet-format.md).

Modules, one purpose each:

- ``fleet``: load and strictly validate a fleet file (``load_fleet`` -> ``Fleet``, ``FleetError``).
- ``texts``: original roleplay reply text in the 17 interface languages.
- ``chat_request`` / ``preferences``: parse a chat request and its ``provider`` object.
- ``routing``: which endpoints may serve a request, in which order (OpenRouter semantics).
- ``content`` / ``schema_instances``: the reply text and its content faults.
- ``wire``: OpenRouter's body, chunk, usage and error shapes.
- ``world``: pure planning of a response script from (fleet, request, counter, clock).
- ``catalog``: the listing endpoints' payloads.
- ``server``: the aiohttp edge (``run``, ``start_in_thread``, ``make_app``).
- ``arrival``: when a request reached the simulator (the kernel's clock, ``request_arrival``).
- ``process``: run it as a child process (``start_simulator``, ``free_port``) for the
  demo, the tests and the benches.

Wall: nothing here imports Django, ``canary.judges`` or ``openrouter`` (the client it
fakes); the simulator must not be able to agree with the judges or the parsers by
construction. It shares only the list of languages (``core.languages``).
"""
