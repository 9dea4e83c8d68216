"""The pure parts of `cortex web`: the briefing's markdown, the pages (every value escaped where it
meets the markup), the source matchers, and who a request may be."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request

from schemas.api import MemoryReply, MemoryVersion
from schemas.docs import Decision, Thread
from schemas.events import MessageEvent
from shared.codec import Envelope
from workers.conversation.ids import derive_id
from workers.web import pages
from workers.web.app import Access, Web, is_loopback
from workers.web.markdown import to_html
from workers.web.reader import by_derived_id, by_event_id, by_time

T0 = datetime(2026, 2, 17, 9, 0, tzinfo=UTC)
HOSTILE = '<img src=x onerror="alert(1)">'


def thread(**changes: Any) -> Thread:
    base: dict[str, Any] = {"id": "t1", "title": "auth migration", "status": "open", "priority": "high",
                            "summary": "", "decisions": [], "waiting_for": None, "mood": "neutral",
                            "last_activity": T0, "created": T0}
    return Thread(**{**base, **changes})


def envelope(event_id: str, ts: datetime, content: str = "hello") -> Envelope:
    event = MessageEvent(id=event_id, agent="main", session="s", ts=ts, role="user", content=content)
    return Envelope(seq=1, subject="cortex.msg.1.main.received", family="msg", kind="received", agent="main",
                    event=event)


def test_the_briefings_markdown_becomes_headings_lists_and_emphasis() -> None:
    out = to_html("# Context\n\n## 🧵 Active Threads\n- **auth migration** — `JWT` rotation\n  waiting for Maria\n"
                  "- dashboard\n\n_Boot context_ *quiet*")
    assert "<h2>Context</h2>" in out and "<h3>🧵 Active Threads</h3>" in out
    assert "<li><strong>auth migration</strong> — <code>JWT</code> rotation<br>waiting for Maria</li>" in out
    assert "<li>dashboard</li></ul>" in out and "<em>quiet</em>" in out


def test_markup_in_a_message_is_shown_as_text_never_run() -> None:
    out = to_html(f"- {HOSTILE} said **<script>alert(2)</script>**")
    assert "<img" not in out and "<script>" not in out
    assert "&lt;img src=x onerror=\"alert(1)\"&gt;" in out and "<strong>&lt;script&gt;" in out


def test_a_thread_title_with_markup_is_escaped_and_a_closed_thread_has_no_close_button() -> None:
    html = pages.threads_page("main", [thread(title=HOSTILE), thread(id="t2", title="done one", status="closed")])
    assert HOSTILE not in html and pages.esc(HOSTILE) in html
    assert html.count('action="/agents/main/threads/t1/close"') == 1
    assert "/threads/t2/close" not in html
    assert 'href="/agents/main/source/thread/t2"' in html  # every item says where it came from


def test_each_page_marks_its_section_and_names_what_refreshes_it() -> None:
    decision = Decision(id="d1", what="use Redis", date="2026-02-17", why="", impact="high", who="albert",
                        extracted_at=T0)
    html = pages.decisions_page("main", [decision])
    assert 'data-live="/agents/main/live?watch=decisions"' in html
    assert '<a href="/agents/main/decisions" aria-current="page">Decisions</a>' in html
    assert '<a class="skip" href="#main">' in html and '<main id="main" tabindex="-1">' in html


def test_an_agent_id_in_a_url_is_quoted() -> None:
    assert pages.agent_url("a b", "source", "event", "x/y?z") == "/agents/a%20b/source/event/x%2Fy%3Fz"


def test_forgetting_asks_first_and_the_form_carries_the_confirmation() -> None:
    memory_id = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
    reply = MemoryReply(id=memory_id, content=HOSTILE, type="fact", scope="permanent", source_event="e1",
                        created_at=T0, versions=[MemoryVersion(content=HOSTILE, type="fact", scope="permanent",
                                                               event="e1", at=T0)])
    html = pages.forget_page("main", reply)
    assert f'action="/agents/main/memories/{memory_id}/forget"' in html
    assert '<input type="hidden" name="confirm" value="yes">' in html and HOSTILE not in html


def test_a_source_page_says_when_it_stopped_reading_before_the_end() -> None:
    assert "stopped after 5 events" in pages.source_page("main", "x", [], 5, complete=False)
    assert "stopped after" not in pages.source_page("main", "x", [], 5, complete=True)


def test_a_decision_is_traced_to_exactly_the_message_it_was_made_from() -> None:
    item = derive_id("m-7", "decision", 1)
    wanted = by_derived_id("decision", item, T0)
    assert wanted(envelope("m-7", T0))
    assert not wanted(envelope("m-8", T0))  # said at the same time, another message
    assert not wanted(envelope("m-7", T0 + timedelta(seconds=1)))  # the time must be the item's too
    assert not by_derived_id("thread", item, T0)(envelope("m-7", T0))  # another kind's id


def test_event_and_time_matchers() -> None:
    assert by_event_id(["a", "b"])(envelope("b", T0)) and not by_event_id(["a"])(envelope("b", T0))
    assert by_time(T0)(envelope("x", T0)) and not by_time(T0)(envelope("x", T0 + timedelta(minutes=1)))


def request(headers: dict[str, str], method: str = "GET") -> Request:
    return Request({"type": "http", "method": method, "path": "/", "query_string": b"",
                    "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]})


def test_a_correction_from_another_site_is_refused() -> None:
    assert Web.same_origin(request({"Sec-Fetch-Site": "same-origin"}, "POST"))
    assert not Web.same_origin(request({"Sec-Fetch-Site": "cross-site"}, "POST"))
    assert not Web.same_origin(request({"Origin": "http://evil.example", "Host": "127.0.0.1:8780"}, "POST"))
    assert Web.same_origin(request({"Origin": "http://127.0.0.1:8780", "Host": "127.0.0.1:8780"}, "POST"))
    assert Web.same_origin(request({}, "POST"))  # curl with a token: no browser, no other site


def test_loopback_answers_only_to_loopback_names() -> None:
    web = Web.__new__(Web)
    web.loopback = True
    assert web.host_ok(request({"Host": "127.0.0.1:8780"})) and web.host_ok(request({"Host": "localhost:8780"}))
    assert web.host_ok(request({"Host": "[::1]:8780"}))
    assert not web.host_ok(request({"Host": "rebound.example:8780"}))
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


def test_a_token_sees_its_own_agent_only() -> None:
    mine = Access(frozenset(["main"]))
    assert mine.allows("main") and not mine.allows("other")
    assert Access(None).allows("anyone")
