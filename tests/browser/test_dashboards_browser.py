"""End to end in real headless Chromium (Debian's package, driven by Playwright): log in,
read the fleet health matrix after real rounds against the default fleet, open a round's
results and an endpoint page with its TTFT chart, lift a suspension with a reason and see
the ignore list change. No console errors and no page errors on any page.

Screenshots go to test-artifacts/ (gitignored). Chromium comes from scripts/browser.sh.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.utils import timezone

from canary.groups import groups_ensure
from canary.models import Decision, Endpoint
from canary.services.ignore_list import ignore_list_get
from tests.conftest import FLEETS
from tests.web.conftest import PASSWORD, slot_floor

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


class Console:
    """Console errors and uncaught page errors seen by the page, with where they came from."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def on_console(self, message: Any) -> None:
        if message.type != "error":
            return
        where = (message.location or {}).get("url", "")
        # Chromium asks every site for its favicon: a 404 there is an error like any other.
        self.errors.append(f"console: {message.text} ({where})")

    def on_page_error(self, error: Any) -> None:
        self.errors.append(f"page error: {error}")


def painted(canvas: Any) -> int:
    """How many pixels of a canvas element are not transparent (a drawn chart has many)."""
    return int(canvas.evaluate(
        """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                  let n = 0; for (let i = 3; i < d.length; i += 4) { if (d[i]) n++; } return n; }"""
    ))


@contextmanager
def chromium_page() -> Iterator[tuple[Any, Console]]:
    """A Playwright page in Debian's Chromium; fails (not skips) without the browser.

    Open it after the test's database work: Playwright's sync API runs an event loop in
    this thread, and Django would then hand ORM calls a connection of their own that the
    test database teardown does not know about.
    """
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: run scripts/browser.sh (make test does)")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    console = Console()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.on("console", console.on_console)
        page.on("pageerror", console.on_page_error)
        page.set_default_timeout(15_000)
        try:
            yield page, console
        finally:
            context.close()
            browser.close()


def shot(page: Any, name: str) -> Path:
    path = ARTIFACTS / f"dashboards-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def run_round(at, language: str) -> dict:
    out = StringIO()
    call_command(
        "canary_round", "--json", "--mode", "enforce", "--language", language,
        "--now", at.strftime("%Y-%m-%dT%H:%M:%SZ"), stdout=out,
    )
    return json.loads(out.getvalue())


@pytest.mark.slow(30)
def test_staff_read_the_dashboards_and_lift_a_suspension(live_server, start_sim, use_sim):
    use_sim(start_sim(FLEETS / "default.json"))
    # Two enforce rounds in the last hour: the broken hosts are suspended now.
    second = slot_floor(timezone.now()) - timedelta(minutes=30)
    run_round(second - timedelta(minutes=30), "pt")
    report = run_round(second, "fr")
    actions = {ep["tag"]: ep["action"] for ep in report["endpoints"]}
    assert actions["borealis/fp8"] == "suspended", actions
    borealis = Endpoint.objects.get(tag="borealis/fp8")
    groups_ensure()
    user = User.objects.create_user("olga", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name="operator"))
    base = live_server.url
    with chromium_page() as (page, console):
        browse(page, console, base, borealis.pk, second)
    # What the page showed is what routing gets.
    assert "borealis/fp8" not in ignore_list_get(borealis.model_id, timezone.now())["ignore"]
    assert Decision.objects.get(action="lifted").actor == "olga"


def browse(page: Any, console: Console, base: str, borealis: int, second) -> None:
    """The staff member's walk through the pages (no database access from here on)."""
    # Log in through the admin's own form.
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#canary-dashboards")
    shot(page, "01-admin-index")

    # Fleet health matrix: 2 rounds × 15 endpoints, failures and suspensions marked.
    page.click("#canary-dashboards >> text=Fleet health")
    page.wait_for_selector("#health-matrix")
    assert page.locator("#health-matrix tbody tr").count() == 2
    assert page.locator("#health-matrix thead th.canary-col").count() == 15
    assert page.locator("#health-matrix td.canary-fail").count() >= 10
    assert page.locator("#health-matrix td.canary-clean").count() >= 10
    shot(page, "02-health-matrix")

    # A cell opens the round's probe results, with that endpoint's block open.
    page.locator(f'#health-matrix a[href*="?endpoint={borealis}#"]').first.click()
    page.wait_for_selector(f"details#ep-{borealis}[open]")
    assert page.locator(f"details#ep-{borealis} .canary-v-fail").count() >= 1
    shot(page, "03-round-results")

    # Endpoint page: the TTFT chart is drawn (pixels on the canvas), tables are there.
    page.goto(f"{base}/admin/canary/endpoint/{borealis}/history/")
    canvas = page.wait_for_selector('canvas#ttft-chart[data-rendered="true"]')
    assert painted(canvas) > 500
    # The TTFT scale is fitted to the values (tens of ms), not pinned to the 10 s limit.
    assert float(canvas.get_attribute("data-y-max")) < 10_000 and canvas.get_attribute("data-limit-shown") == "false"
    assert page.evaluate("typeof window.Chart") == "function"
    assert painted(page.wait_for_selector('canvas#checks-chart[data-rendered="true"]')) > 500
    # The reason names the check and k of n; the evidence is the failing reply, its first
    # bad character marked, with the rule in words and the prompt's language.
    assert "leading_garbage on " in page.inner_text("#last-round")
    assert page.locator(".canary-failure mark.canary-bad").count() >= 1
    assert "Rule:" in page.inner_text(".canary-failure")
    assert page.locator("#verdict-history tbody tr").count() == 2
    assert page.locator("#failed-checks tbody tr").count() >= 1
    assert page.locator(".canary-timeline .canary-bar-enforced").count() == 1
    shot(page, "04-endpoint")

    # Ignore list: borealis is there as a canary suspension; lift it with a reason.
    page.goto(f"{base}/admin/canary/exclusion/ignore-list/")
    row = page.locator('tr[data-target="borealis/fp8"][data-layer="canary"]')
    assert row.count() == 1
    assert page.locator("code.canary-target", has_text="borealis/fp8").count() == 1
    shot(page, "05-ignore-list-before")
    row.locator("a.canary-lift").click()
    page.wait_for_selector("#reason-form")
    page.fill("textarea[name=reason]", "Borealis fixed their detokenizer (ticket 42)")
    shot(page, "06-lift-form")
    page.click('#reason-form input[type=submit]')
    page.wait_for_url("**/admin/canary/exclusion/ignore-list/")
    assert "Lifted the suspension of borealis/fp8." in page.locator("ul.messagelist").inner_text()
    assert page.locator('tr[data-target="borealis/fp8"]').count() == 0
    assert page.locator("code.canary-target", has_text="borealis/fp8").count() == 0
    assert page.locator('tr[data-target="cinder/fp8"][data-layer="canary"]').count() == 1
    shot(page, "07-ignore-list-after")

    # The other pages render without script errors.
    page.goto(f"{base}/admin/canary/decision/observe-report/")
    page.wait_for_selector("#observe-decisions")
    shot(page, "08-observe-report")
    page.goto(f"{base}/admin/canary/round/probe-health/")
    page.wait_for_selector("#weak-rounds")
    shot(page, "09-probe-health")
    page.goto(f"{base}/admin/canary/proberesult/correlate/")
    page.fill("#id_at", (second - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M"))
    page.select_option("#id_symptom", "language")
    page.select_option("#id_language", "pt")
    page.click("#report-form button[type=submit]")
    page.wait_for_selector("#report-results")
    assert page.locator("#report-results tr.canary-relevant").count() >= 1
    shot(page, "10-user-report")

    assert console.errors == []
