"""`cortex web` in a real browser: Debian's headless Chromium driven by Playwright's Python
package (the browser from the machine, never downloaded), against `cortex demo --web` — the demo
conversation through its real nats-server, every worker, the real embedded Qdrant and embedding
model, left running — and, on the same server with a second agent's conversation, `cortex web`
behind the bearer tokens of `cortex mcp --http`.

Screenshots of the main pages go to ``$CORTEX_WEB_SCREENSHOTS`` (docs/web regenerates the
committed ones: ``CORTEX_WEB_SCREENSHOTS=docs/web .venv/bin/pytest tests/e2e/test_web.py -n 0``),
else to the test's temporary directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from cortex_testkit import CONSUMING, cortex, demo_file, drained, stop_process, wait_for, wait_until

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MAIN_TOKEN = "main-token-0123456789abcdef"
OTHER_TOKEN = "other-token-0123456789abcdef"
LIVE_S = 2.0  # a page shows a document's change within this, without a reload

if os.environ.get("CORTEX_REQUIRE_CHROMIUM"):  # .ci/run installed the browser: run, never skip
    import playwright.sync_api as playwright_api
else:
    playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not "
                                                                       "installed (pip install '.[dev]')")
if not Path(CHROMIUM).exists():
    if os.environ.get("CORTEX_REQUIRE_CHROMIUM"):
        raise RuntimeError(f"{CHROMIUM} is missing and CORTEX_REQUIRE_CHROMIUM is set (.ci/run installs Debian's "
                           "chromium package)")
    pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does) to run the browser tests",
                allow_module_level=True)

pytestmark = pytest.mark.timeout(300)


class Served:
    """The pipeline and `cortex web` the tests share: the demo's NATS URL and the page's base URL."""

    def __init__(self, nats_url: str, base: str, tmp: Path) -> None:
        self.nats_url = nats_url
        self.base = base
        self.tmp = tmp

    def recall(self, agent: str, query: str) -> list[dict[str, Any]]:
        done = cortex("recall", agent, query, "--json", url=self.nats_url)
        assert done.returncode == 0, done.stderr
        memories: list[dict[str, Any]] = json.loads(done.stdout)["memories"]
        return memories


async def _all_applied(url: str) -> None:
    nc = await nats.connect(url)
    try:
        await wait_for(lambda: drained(nc.jetstream(), CONSUMING), within=120, interval=0.2)
    finally:
        await nc.close()


def _said(log: Path, pattern: str) -> str | None:
    found = re.search(pattern, log.read_text(errors="replace"))
    return found.group(1) if found else None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`cortex demo --web` (its pipeline left running, its page open on loopback), a second agent's
    demo conversation published to the demo's server, and `cortex web --tokens` beside it."""
    tmp = tmp_path_factory.mktemp("web")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_") and k != "ANTHROPIC_API_KEY"}
    env.update(HOME=str(tmp), CORTEX_RUNTIME_FETCH_TIMEOUT_MS="100", CORTEX_LOG_LEVEL="WARNING")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(tmp / "demo.log", "wb") as log:
            procs.append(subprocess.Popen([sys.executable, "-m", "workers", "demo", "--web"], env=env, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp))
        demo_page = wait_until(lambda: _said(tmp / "demo.log", r"in a browser at (http://\S+/briefing)"),
                               within=240, interval=0.2)
        nats_url = _said(tmp / "demo.log", r"embedded nats-server on (nats://[^;\s]+)")
        assert nats_url is not None
        (tmp / "demo-page.html").write_bytes(urllib.request.urlopen(demo_page, timeout=30).read())
        assert cortex("publish", str(demo_file(tmp, "other")), url=nats_url).returncode == 0
        asyncio.run(_all_applied(nats_url))
        (tmp / "tokens").write_text(f"main {MAIN_TOKEN}\nother {OTHER_TOKEN}\n")
        with open(tmp / "web.log", "wb") as log:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "workers", "web", "--listen", "127.0.0.1:0", "--tokens", str(tmp / "tokens"),
                 "--nats-url", nats_url], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        base = wait_until(lambda: _said(tmp / "web.log", r"cortex web: (http://\S+/)"), within=30)
        yield Served(nats_url, base, tmp)
        demo = procs[0]
        demo.send_signal(signal.SIGINT)  # Ctrl-C ends `cortex demo --web`: its workers, its server
        assert demo.wait(60) in (0, 130), (tmp / "demo.log").read_text(errors="replace")[-2000:]
    finally:
        for proc in reversed(procs):
            stop_process(proc)


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Any]:
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, served: Served) -> Iterator[Any]:
    """A fresh browser context signed in as agent main, through the sign-in form."""
    context = browser.new_context(viewport={"width": 1100, "height": 720}, color_scheme="light")
    tab = context.new_page()
    tab.goto(served.base + "agents/main/briefing")
    assert "/login" in tab.url  # no token yet: the sign-in page, not the data
    tab.get_by_label("Token").fill(MAIN_TOKEN)
    tab.get_by_label("Token").press("Enter")
    playwright_api.expect(tab).to_have_url(re.compile(r"/agents/main/briefing$"))
    try:
        yield tab
    finally:
        context.close()


def screenshot(tab: Any, served: Served, name: str) -> None:
    target = Path(os.environ.get("CORTEX_WEB_SCREENSHOTS") or served.tmp / "screenshots")
    target.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(target / f"{name}.png"), full_page=False)


def test_cortex_demo_web_leaves_the_page_open_on_the_demos_data(served: Served) -> None:
    """What `cortex demo --web` printed the URL of is the demo agent's briefing, served while the
    demo keeps running (the fixture fetched it, and ends the demo with Ctrl-C)."""
    said = (served.tmp / "demo-page.html").read_text()
    assert "<title>Briefing of main · Cortex</title>" in said and "Active Threads" in said
    assert "kubernetes cluster upgrade" in said.lower()


def test_the_briefing_shows_the_demos_threads_decisions_and_commitments(page: Any, served: Served) -> None:
    briefing = page.locator("article.briefing")
    for heading in ("Active Threads", "Recent Decisions", "Commitments"):
        playwright_api.expect(briefing.get_by_role("heading", name=re.compile(heading))).to_be_visible()
    text = briefing.inner_text()
    assert "kubernetes cluster upgrade" in text.lower()  # a thread
    assert "Redis" in text  # a decision (Dashboard-Caching mit Redis)
    assert "rollback script" in text  # a commitment
    assert "<" not in page.locator("main h1").inner_text()
    screenshot(page, served, "briefing")
    page.emulate_media(color_scheme="dark")  # the one stylesheet's dark half
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(22, 24, 26)"
    screenshot(page, served, "briefing-dark")
    page.emulate_media(color_scheme="light")
    page.get_by_role("link", name="Threads").click()
    playwright_api.expect(page.get_by_role("cell", name=re.compile("kubernetes cluster", re.I)).first).to_be_visible()
    screenshot(page, served, "threads")
    page.goto(served.base)
    playwright_api.expect(page.get_by_role("link", name="main")).to_be_visible()
    assert page.get_by_role("link", name="other").count() == 0  # main's token sees main alone
    screenshot(page, served, "agents")


def test_a_memory_search_finds_a_fact(page: Any, served: Served) -> None:
    page.get_by_role("link", name="Memories").click()
    page.get_by_role("searchbox").fill("Where does Maria work?")
    page.get_by_role("searchbox").press("Enter")
    row = page.get_by_role("row").filter(has_text="Maria works at Acme Analytics GmbH")
    playwright_api.expect(row.first).to_be_visible()
    score = float(row.first.get_by_title("the ranked score").inner_text())
    assert score > 0
    screenshot(page, served, "memories")


def test_a_source_link_shows_the_message(page: Any, served: Served) -> None:
    page.get_by_role("link", name="Decisions").click()
    row = page.get_by_role("row").filter(has_text="move token signing to the new key service")
    screenshot(page, served, "decisions")
    row.get_by_role("link", name="why?").click()
    playwright_api.expect(page.get_by_role("heading", name="Why is this here?")).to_be_visible()
    said = page.locator(".said")
    playwright_api.expect(said).to_have_count(1)
    assert "because the old HMAC secret is shared across services" in said.inner_text()  # the message itself
    assert page.get_by_role("cell", name="claudia").count() == 1
    screenshot(page, served, "source")


def test_forgetting_a_memory_from_the_page_removes_it_from_recall(page: Any, served: Served) -> None:
    query = "rollback script for the auth migration"
    target = next(m for m in served.recall("main", query) if "rollback script" in m["content"])
    page.goto(served.base + "agents/main/memories?q=" + urllib.request.quote(query))
    row = page.get_by_role("row").filter(has=page.get_by_title(target["id"]))
    row.get_by_role("link", name="Forget…").click()
    playwright_api.expect(page.get_by_role("heading", name="Forget this memory?")).to_be_visible()
    assert any(m["id"] == target["id"] for m in served.recall("main", query))  # asking removed nothing
    page.get_by_role("button", name="Forget this memory").click()
    playwright_api.expect(page.locator(".notice")).to_contain_text("memory_forget")
    wait_until(lambda: all(m["id"] != target["id"] for m in served.recall("main", query)), within=60, interval=0.5)


def test_a_page_updates_live_within_two_seconds_without_a_reload(page: Any, served: Served) -> None:
    page.get_by_role("link", name="Decisions").click()
    playwright_api.expect(page.locator("body[data-live_open='1']")).to_have_count(1)  # the page listens
    page.evaluate("window.__same_page = true")
    said = "We decided to archive the audit logs in S3 Glacier because it costs a tenth."
    event = {"type": "msg.received", "id": "web-live-1", "agent": "main", "session": "s-demo-2",
             "ts": "2026-02-17T10:06:00Z", "role": "user", "sender": "albert", "channel": "webchat", "content": said}
    (served.tmp / "live.jsonl").write_text(json.dumps(event) + "\n")
    assert cortex("publish", str(served.tmp / "live.jsonl"), url=served.nats_url).returncode == 0

    def stored() -> bool:
        done = cortex("decisions", "main", "--json", url=served.nats_url)
        return "S3 Glacier" in done.stdout

    wait_until(stored, within=60, interval=0.05)
    written = time.monotonic()
    playwright_api.expect(page.get_by_role("cell", name=re.compile("S3 Glacier")).first).to_be_visible(
        timeout=LIVE_S * 1000)
    print(f"the page showed the decision {time.monotonic() - written:.2f} s after the API had it")
    assert page.evaluate("window.__same_page") is True  # swapped in place, not reloaded


def test_another_agents_page_is_403_for_a_token_of_the_first(page: Any, served: Served) -> None:
    response = page.goto(served.base + "agents/other/briefing")
    assert response is not None and response.status == 403
    playwright_api.expect(page.get_by_role("alert")).to_contain_text("does not stand for other")
    assert "kubernetes" not in page.content().lower()
    for token, status in ((MAIN_TOKEN, 403), (OTHER_TOKEN, 200), ("not-a-token-at-all-000000", 401)):
        request = urllib.request.Request(served.base + "agents/other/threads",
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                got = reply.status
        except urllib.error.HTTPError as exc:
            got = exc.code
        assert got == status, token



def fetch(served: Served, path: str, token: str = MAIN_TOKEN, data: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(served.base + path, data=data,
                                     headers={"Authorization": f"Bearer {token}", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_bad_requests_get_a_clear_answer_and_the_server_goes_on(served: Served) -> None:
    """Hostile or wrong input: a plain 4xx page, nothing published, the next request served."""
    hostile = urllib.request.quote('<script>alert(1)</script>', safe="")
    assert fetch(served, f"agents/{hostile}/briefing")[0] == 404
    assert fetch(served, "agents/main/nonsense")[0] == 404
    assert fetch(served, "agents/main/source/decision/0000000000000000")[0] == 404
    status, body = fetch(served, "agents/main/memories/1b4e28ba-2fa1-11d2-883f-0016d3cca427/forget")
    assert status == 404 and "no memory" in body  # the recall API's own answer
    status, body = fetch(served, "agents/main/memories?q=" + urllib.request.quote("x" * 10_000 + hostile))
    assert status == 200 and "<script>alert" not in body
    # a correction posted by a page of another site is refused before anything is published
    status, _ = fetch(served, "agents/main/threads/whatever/close", data=b"", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    assert fetch(served, "agents/main/threads/not-a-thread/close", data=b"")[0] == 404  # the CLI's own check
    assert fetch(served, "agents/main/memories/not-a-uuid/pin", data=b"")[0] == 404
    status, body = fetch(served, "agents/main/threads")
    assert status == 200 and "kubernetes" in body.lower()


def test_a_wrong_decision_and_a_false_commitment_leave_their_documents(page: Any, served: Served) -> None:
    """"Wrong" and "Not a commitment": a decision_reject and a commitment_reject, applied by the
    decisions worker; the rows go from the page by themselves (live), the notice stays."""
    def items(kind: str) -> list[dict[str, Any]]:
        done = cortex(kind, "main", "--json", url=served.nats_url)
        assert done.returncode == 0, done.stderr
        found: list[dict[str, Any]] = json.loads(done.stdout)[kind]
        return found

    wrong = next(d for d in items("decisions") if not re.search("token signing|Redis|Glacier", d["what"]))
    false = next(c for c in items("commitments") if "dashboard performance bug" in c["what"])
    page.get_by_role("link", name="Decisions").click()
    page.get_by_role("row").filter(has_text=wrong["what"]).get_by_role("button", name="Wrong").click()
    playwright_api.expect(page.locator(".notice")).to_contain_text("decision_reject")
    playwright_api.expect(page.get_by_role("row").filter(has_text=wrong["what"])).to_have_count(0, timeout=30_000)
    # the row went by a live swap of <main>: the correction's notice is still on screen
    playwright_api.expect(page.locator(".notice")).to_contain_text("decision_reject")
    page.get_by_role("link", name="Commitments").click()
    row = page.get_by_role("row").filter(has_text=false["what"])
    row.get_by_role("button", name="Not a commitment").click()
    playwright_api.expect(page.locator(".notice")).to_contain_text("commitment_reject")
    playwright_api.expect(page.get_by_role("row").filter(has_text=false["what"])).to_have_count(0, timeout=30_000)
    playwright_api.expect(page.locator(".notice")).to_contain_text("commitment_reject")
    assert all(d["id"] != wrong["id"] for d in items("decisions"))
    assert all(c["id"] != false["id"] for c in items("commitments"))
