"""Bench: a new user's trial of the gateway on real text served as replies: how many clean
replies it blocks and how many defective ones it delivers (issue "The live path costs no
good reply", "Done when": at most 1 clean reply in 1,000 blocked; no mojibake,
junk-prefixed or language-shifted reply delivered, conversation-aware, no header).

Method. An OpenRouter-compatible stub (``http.server`` in a thread of this process, not
the simulator) answers every chat request with the one real text the request names (a
case number in its system message), streamed as SSE chunks of ``--chunk-chars``
characters ``--chunk-ms`` apart after ``--first-ms`` (or as one ``chat.completion`` when
the request is not streamed). The gateway is the web app under gunicorn (gthread, 2 x 8),
with the shipped ``roleplay-reply`` contract and two routes that both reach the stub, so
both serve the same reply: a fallback cannot hide a block. Each case goes through the
``openai`` SDK (``max_retries=0``), no ``X-Expected-Language`` header; even cases
streamed, odd ones not. Texts: ``tests/fixtures/real-text`` (``tests.real_text_prefix.texts``).

- Clean: every clean text (XSTest compliant answers, LLMZoo answers, NTREX news in 17
  languages), after an earlier assistant turn in the text's language (another NTREX
  passage), so the gateway expects the conversation's language; ftfy's must-not-change
  strings (they have no language) in a short chat where no language is known.
- Defects: ``mojibake`` (ftfy's cases and bug-report quotes, short chat; NTREX passages
  with non-ASCII letters as UTF-8 read as Windows-1252, and Russian, Arabic, Italian and
  German ones read as Windows-1251, MacRoman or cp437 (``OTHER_PAGES``), made here, in a
  conversation in their language), ``junk_prefix`` (vicuna-7b's answers that open with its template's ": ",
  a bug-report quote), ``language_shift`` (NTREX passages in another language's
  conversation: es in pt, pt in es, en in ja, ja in zh, fr in it; LLMZoo's Chinese
  questions answered in English; bug-report quotes), ``other`` (the remaining real
  defects: invalid characters, repetition, BPE glyphs, ...). XSTest refusals are left out:
  the refusal judge is evidence only, by design.

Outcomes: ``delivered`` (a streamed reply that ended normally, or a 200 non-streamed
reply), ``after_commit`` (a stream that ended with an error event: the client saw a part,
then an error), ``http_<status>`` (refused before the first byte). A clean reply counts as
blocked unless delivered; a defect as delivered only when delivered.

Run: ``.venv/bin/python bench/real_text_gateway.py [--limit N] [--concurrency 6]
[--database-url URL] [--examples 5]`` (Redis on REDIS_URL). Every wait has a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import environ
import ftfy.bad_codecs  # noqa: F401 - registers the sloppy-windows-* code pages
import openai
import redis
from _setup import ROOT, Server, django_on, gunicorn_start

from fake_openrouter.process import free_port  # noqa: E402
from tests.real_text_prefix import Text, texts  # noqa: E402

MODEL = "stub/real-text"
ROUTES = (("stub-a", "alpha/fp8"), ("stub-b", "beta/fp8"))
CASE = re.compile(r"\[case (\d+)\]")
SHIFTS = (("es", "pt"), ("pt", "es"), ("en", "ja"), ("ja", "zh"), ("fr", "it"))
MOJIBAKE_LANGS = ("es", "pt", "fr", "de", "pl", "tr", "vi")
# UTF-8 read as the other code pages of the mojibake rule (canary.judges.encoding): which
# language's passages, read as which page (ftfy's codec names).
OTHER_PAGES = (("ru", "sloppy-windows-1251", "cp1251"), ("ar", "sloppy-windows-1251", "cp1251"),
               ("it", "macroman", "MacRoman"), ("ru", "macroman", "MacRoman"),
               ("de", "cp437", "cp437"), ("ru", "cp437", "cp437"))
LOG = Path(tempfile.mkdtemp()) / "gunicorn.log"  # the gateway's stderr, named on failure


@dataclass
class Case:
    """One reply to serve: ``role`` clean or defect, ``kind``, ``group`` (how it is
    reported), ``text`` (what the stub sends), ``conversation`` (the language of the
    earlier assistant turn, or None: a short chat)."""

    number: int
    role: str
    kind: str
    group: str
    source: str
    language: str | None
    conversation: str | None
    text: str
    outcome: str = ""
    detail: str = ""
    served: int = 0
    stream: bool = True
    resent: int = 0


@dataclass
class Stub:
    """The OpenRouter-compatible stub's state: texts by case number, requests seen."""

    cases: dict[int, str]
    first_s: float
    chunk_s: float
    chunk_chars: int
    served: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _json(self, status: int, obj: dict) -> None:
            raw = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            system = next((m.get("content") for m in body.get("messages", []) if m.get("role") == "system"), "")
            found = CASE.search(system if isinstance(system, str) else "")
            if not found or int(found.group(1)) not in stub.cases:
                self._json(400, {"error": {"code": 400, "message": "no [case N] in the system message"}})
                return
            number = int(found.group(1))
            with stub.lock:
                stub.served[number] += 1
            text = stub.cases[number]
            meta = {"id": f"gen-{uuid.uuid4().hex[:16]}", "provider": "Stub", "model": body.get("model", MODEL),
                    "created": int(time.time())}
            tokens = max(1, len(text) // 4)
            usage = {"prompt_tokens": 40, "completion_tokens": tokens, "total_tokens": 40 + tokens, "cost": 0.0}
            if not body.get("stream"):
                time.sleep(stub.first_s)
                self._json(200, {**meta, "object": "chat.completion", "choices": [{
                    "index": 0, "finish_reason": "stop", "native_finish_reason": "stop",
                    "message": {"role": "assistant", "content": text}}], "usage": usage})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

            def send(choices: list, **extra: Any) -> None:
                obj = {**meta, "object": "chat.completion.chunk", "choices": choices, **extra}
                self.wfile.write(b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n")
                self.wfile.flush()

            try:
                time.sleep(stub.first_s)
                for start in range(0, len(text), stub.chunk_chars):
                    send([{"index": 0, "delta": {"role": "assistant", "content": text[start:start + stub.chunk_chars]},
                           "finish_reason": None}])
                    time.sleep(stub.chunk_s)
                send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "stop",
                       "native_finish_reason": "stop"}])
                send([], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the gateway cut the attempt (a rejected prefix)

    return Handler


def build_cases(limit: int | None, seed: int) -> tuple[list[Case], dict[str, list[str]]]:
    """Every case (shuffled with ``seed``; the first ``limit`` of each group when given)
    and the NTREX passages per language (the earlier assistant turns)."""
    everything = texts()
    ntrex: dict[str, list[str]] = defaultdict(list)
    for t in everything:
        if t.corpus == "ntrex":
            ntrex[t.language or ""].append(t.text)
    out: list[Case] = []

    def add(role: str, kind: str, group: str, t: Text, conversation: str | None, text: str | None = None) -> None:
        out.append(Case(0, role, kind, group, t.source, t.language, conversation, text if text is not None else t.text))

    for t in everything:
        if t.kind == "refusal":
            continue
        if t.role == "clean" and t.corpus == "ftfy":
            add("clean", "clean", "ftfy must-not-change (short chat)", t, None)
        elif t.role == "clean" and "leading_garbage" in t.skip:
            continue  # vicuna-7b's ": " openers: served once, as junk-prefixed defects
        elif t.role == "clean":
            add("clean", "clean", f"{t.corpus} {t.language}", t, t.language)
        elif t.kind == "mojibake":
            add("defect", "mojibake", f"mojibake {t.corpus}", t, t.language)
        elif t.kind == "leading_garbage":
            add("defect", "junk_prefix", f"junk_prefix {t.corpus}", t, t.language)
        elif t.kind in ("language_shift", "language_anomaly"):
            add("defect", "language_shift", f"language_shift {t.corpus} ({t.language})", t, t.language)
        else:
            add("defect", "other", f"{t.kind} {t.corpus}", t, t.language)
    by_lang = {t.language: [x for x in everything if x.corpus == "ntrex" and x.language == t.language]
               for t in everything if t.corpus == "ntrex"}
    for reply, conversation in SHIFTS:
        for t in by_lang[reply]:
            add("defect", "language_shift", f"language_shift ntrex {reply} in {conversation}", t, conversation)
    for lang in MOJIBAKE_LANGS:
        for t in by_lang[lang]:
            broken = t.text.encode("utf-8").decode("sloppy-windows-1252")
            if broken != t.text:
                add("defect", "mojibake", f"mojibake ntrex {lang} (UTF-8 read as cp1252)", t, lang, broken)
    for lang, page, name in OTHER_PAGES:
        for t in by_lang[lang]:
            broken = t.text.encode("utf-8").decode(page)
            if broken != t.text:
                add("defect", "mojibake", f"mojibake ntrex {lang} (UTF-8 read as {name})", t, lang, broken)
    if limit is not None:
        kept: list[Case] = []
        seen: Counter = Counter()
        for case in out:
            if seen[case.group] < limit:
                seen[case.group] += 1
                kept.append(case)
        out = kept
    random.Random(seed).shuffle(out)
    for number, case in enumerate(out):
        case.number = number
        case.stream = number % 2 == 0
    return out, ntrex


def messages(case: Case, ntrex: dict[str, list[str]]) -> list[dict[str, str]]:
    """The conversation of ``case``: the case number in the system message, then an
    earlier assistant turn in ``case.conversation`` (an NTREX passage other than the reply)
    or none, and a short last user turn (too short for a language reading)."""
    system = {"role": "system", "content": f"You are the narrator of a long story. [case {case.number}]"}
    if case.conversation is None:
        return [system, {"role": "user", "content": "Go on."}]
    pool = [p for p in ntrex[case.conversation] if p != case.text]
    earlier = pool[case.number % len(pool)]
    return [system, {"role": "user", "content": "Tell me."}, {"role": "assistant", "content": earlier},
            {"role": "user", "content": "Go on."}]


def _error_detail(exc: openai.APIError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body) if isinstance(body, dict) else {}
    if not isinstance(error, dict):
        return str(exc)[:200]
    checks = []
    for attempt in error.get("attempts") or []:
        if isinstance(attempt, dict):
            checks.append(str(attempt.get("message") or attempt.get("failure_reason") or attempt)[:120])
    return f"{error.get('code')}: {str(error.get('message'))[:160]}" + (f" | attempts: {checks}" if checks else "")


def run_case(client: openai.OpenAI, case: Case, ntrex: dict[str, list[str]], reset: Any = None) -> None:
    """Send ``case`` through the SDK and set its ``outcome`` and ``detail``. With ``reset``
    (a function that clears every breaker), a 503 from open breakers (not a verdict on this
    reply) clears them and sends the case again, up to 3 times; ``case.resent`` counts."""
    for _ in range(4):
        _send(client, case, ntrex)
        if reset is None or case.outcome != "http_503" or "all_routes_suppressed" not in case.detail:
            return
        case.resent += 1
        reset()


def _send(client: openai.OpenAI, case: Case, ntrex: dict[str, list[str]]) -> None:
    kw: dict[str, Any] = {"model": MODEL, "messages": messages(case, ntrex), "max_tokens": 1500,
                          "extra_headers": {"X-Routing-Contract": "roleplay-reply@1"}}
    try:
        if not case.stream:
            completion = client.chat.completions.create(**kw)
            content = completion.choices[0].message.content or ""
            case.outcome = "delivered"
            case.detail = "" if content == case.text else f"content differs ({len(content)} of {len(case.text)} chars)"
            return
        parts: list[str] = []
        finish = None
        stream = client.chat.completions.create(stream=True, **kw)
        try:
            for chunk in stream:
                if chunk.choices:
                    parts.append(chunk.choices[0].delta.content or "")
                    finish = chunk.choices[0].finish_reason or finish
        except openai.APIStatusError:
            raise
        except openai.APIError as exc:
            case.outcome = "after_commit"
            case.detail = f"after {len(''.join(parts))} chars: {_error_detail(exc)}"
            return
        content = "".join(parts)
        case.outcome = "delivered" if finish else "cut"
        case.detail = "" if content == case.text else f"content differs ({len(content)} of {len(case.text)} chars)"
    except openai.APIStatusError as exc:
        case.outcome = f"http_{exc.status_code}"
        case.detail = _error_detail(exc)
    except openai.APIError as exc:
        case.outcome = f"error_{type(exc).__name__}"
        case.detail = str(exc)[:200]


def report(cases: list[Case], examples: int, elapsed_s: float, args: argparse.Namespace) -> dict[str, Any]:
    """Print the tables; return the totals (``clean``, ``clean_blocked``, per defect kind
    ``[delivered, of]``)."""
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{stamp}; gunicorn 2 x 8 gthread, roleplay-reply as shipped, no X-Expected-Language; stub pace: first "
          f"{args.first_ms} ms, {args.chunk_chars} chars every {args.chunk_ms} ms; concurrency {args.concurrency}; "
          f"{len(cases)} replies in {elapsed_s:.0f} s")
    clean = [c for c in cases if c.role == "clean"]
    blocked = [c for c in clean if c.outcome != "delivered"]
    totals: dict[str, Any] = {"clean": len(clean), "clean_blocked": len(blocked), "defects": {}}
    print(f"\nclean replies blocked: {len(blocked)} of {len(clean)} ({len(blocked) / max(1, len(clean)):.2%}); "
          f"target at most 1 in 1,000")
    language_clean = [c for c in clean if c.conversation is not None]
    print(f"  in a conversation in the text's language: "
          f"{sum(c.outcome != 'delivered' for c in language_clean)} of {len(language_clean)}")
    for title, key in (("per language", lambda c: c.language or "-"), ("per source", lambda c: c.source),
                       ("per group", lambda c: c.group)):
        groups: dict[str, list[Case]] = defaultdict(list)
        for c in clean:
            groups[key(c)].append(c)
        cells = ", ".join(f"{k} {sum(c.outcome != 'delivered' for c in v)}/{len(v)}" for k, v in sorted(groups.items()))
        print(f"  {title}: {cells}")
    outcomes = Counter(c.outcome for c in blocked)
    if outcomes:
        print(f"  blocked clean replies by outcome: {dict(outcomes)}")
    for c in blocked[:examples]:
        print(f"    [{c.group} / {c.source} / {'stream' if c.stream else 'whole'}] {c.outcome} {c.detail[:300]}")
        print(f"      text: {c.text[:120]!r}")
    print("\ndefects delivered, per kind:")
    defects = [c for c in cases if c.role == "defect"]
    kinds: dict[str, list[Case]] = defaultdict(list)
    for c in defects:
        kinds[c.kind].append(c)
    for kind, items in sorted(kinds.items()):
        delivered = [c for c in items if c.outcome == "delivered"]
        totals["defects"][kind] = [len(delivered), len(items)]
        how = Counter(c.outcome for c in items)
        print(f"  {kind:<15} delivered {len(delivered)} of {len(items)}   outcomes {dict(how)}")
        groups = defaultdict(list)
        for c in items:
            groups[c.group].append(c)
        for group, members in sorted(groups.items()):
            print(f"      {group:<48} delivered {sum(c.outcome == 'delivered' for c in members)} of {len(members)}")
        for c in delivered[:examples]:
            print(f"    delivered [{c.group} / {c.source} / {'stream' if c.stream else 'whole'}] "
                  f"{c.text[:100]!r}")
    streamed = [c for c in cases if c.stream]
    print(f"\nstreamed {len(streamed)}, not streamed {len(cases) - len(streamed)}; clean blocked streamed "
          f"{sum(c.stream for c in blocked)}, not streamed {sum(not c.stream for c in blocked)}")
    return totals


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="at most N cases per group (a quick run)")
    parser.add_argument("--concurrency", type=int, default=6)
    parser.add_argument("--first-ms", type=int, default=60, help="the stub's time to first chunk")
    parser.add_argument("--chunk-chars", type=int, default=12)
    parser.add_argument("--chunk-ms", type=int, default=4)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument("--database-url", default=None, help="the gateway's database (default: a fresh SQLite file)")
    parser.add_argument("--breakers", choices=("reset", "live"), default="reset",
                        help="reset: a 503 from open breakers clears them and re-sends (the guards' verdicts "
                             "alone); live: breakers as deployed (defects served by both routes open them)")
    parser.add_argument("--json", type=Path, default=None, help="also write every case's outcome here")
    args = parser.parse_args(argv)

    if args.database_url:
        # Refused at once with the reason, not after the pool's retries fill the screen.
        # Imported only now: importing reverie_ops reads the settings, which must see the
        # database named here.
        os.environ["DATABASE_URL"] = args.database_url
        from reverie_ops.database import connection_problem

        problem = connection_problem(environ.Env.db_url_config(args.database_url))
        if problem:
            parser.error(f"--database-url: {problem}")
    db_url = args.database_url or f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench-real-text.sqlite3'}"
    django_on(db_url)
    from core.tokens import service_token_issue
    from routing.models import Route
    from routing.services.contracts import contract_version_create

    cases, ntrex = build_cases(args.limit, args.seed)
    stub = Stub({c.number: c.text for c in cases}, args.first_ms / 1000, args.chunk_ms / 1000, args.chunk_chars)
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _handler(stub))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stub_url = f"http://127.0.0.1:{server.server_address[1]}/api/v1"

    shipped = next(c for c in json.loads((ROOT / "routing" / "contract_files" / "workloads.json").read_text())
                   if c["name"] == "roleplay-reply")
    contract_version_create({k: v for k, v in shipped.items() if k != "version"})
    for name, tag in ROUTES:
        # update_or_create: a database named with --database-url may hold them from a run before.
        Route.objects.update_or_create(name=name, defaults=dict(
            model_id=MODEL, provider_tag=tag, modalities=["text"], context_length=131072,
            model_class=shipped["model_classes"][0], price_prompt_usd="0.0000001", price_completion_usd="0.0000002"))
    _, token = service_token_issue(f"bench-{uuid.uuid4().hex[:6]}")
    env = {**os.environ, "DATABASE_URL": db_url, "OPENROUTER_BASE_URL": stub_url, "OPENROUTER_API_KEY": "sk-bench",
           "ROUTING_BREAKER_PREFIX": f"bench:breaker:{uuid.uuid4().hex}"}
    web: Server | None = None
    try:
        web = gunicorn_start(env, workers=2, threads=8, args=["--timeout", "120"], log=LOG)
        client = openai.OpenAI(base_url=f"{web.base}/v1", api_key=token, max_retries=0,
                               timeout=60.0)
        breakers = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))

        def reset() -> None:
            keys = list(breakers.scan_iter(f"{env['ROUTING_BREAKER_PREFIX']}:*"))
            if keys:
                breakers.delete(*keys)

        started = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as pool:
            list(pool.map(lambda c: run_case(client, c, ntrex, reset if args.breakers == "reset" else None), cases,
                          timeout=1800))
        elapsed = time.perf_counter() - started
    except Exception:
        print(f"the gateway's log: {LOG}", file=sys.stderr)
        raise
    finally:
        if web is not None:
            web.stop()
        server.shutdown()
    for c in cases:
        c.served = stub.served[c.number]
    totals = report(cases, args.examples, elapsed, args)
    served = Counter(c.served for c in cases)
    print(f"upstream attempts per reply (stub requests): {dict(sorted(served.items()))}")
    resent = [c for c in cases if c.resent]
    print(f"breakers: {args.breakers}; replies that met open breakers (503) and were re-sent after a reset: "
          f"{len(resent)} ({sum(c.role == 'clean' for c in resent)} clean), {sum(c.resent for c in cases)} re-sends")
    if args.json:
        args.json.write_text(json.dumps([c.__dict__ for c in cases], ensure_ascii=False, indent=0))
    return totals


if __name__ == "__main__":
    main()
