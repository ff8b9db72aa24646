"""visualization.html in a real browser: the article's table, the slider, the erase, governance, health, hostile text.

The page is read by a headless Chromium with ``--dump-dom``: Chromium loads the page from disk
(``file://``, as a reader would), runs its scripts, and prints the resulting DOM, which we parse with
the standard library. A dump cannot drag a slider or pick a filter, so the page reads ``?threshold=``
and ``?reason=`` from its URL.

Without a browser these tests skip, unless ``V2_MEMORY_REQUIRE_BROWSER=1`` (CI), where they fail.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "v2_memory" / "visualization.html"
QUERY = "记忆污染 阈值 Agent"
BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
BROWSER_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-proxy-server", "--virtual-time-budget=3000",
]
HOSTILE = (
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
    "<script>document.title=\"pwned\"</script>"
)


# ---- A tiny DOM: Chromium's dump is well-formed HTML, so a stack of open elements is enough ----
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node | str] = []

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def by_id(self, element_id: str) -> Node:
        found = [n for n in self.iter() if n.attrs.get("id") == element_id]
        assert len(found) == 1, f"expected one #{element_id}, found {len(found)}"
        return found[0]

    def by_class(self, name: str) -> list[Node]:
        return [n for n in self.iter() if name in (n.attrs.get("class") or "").split()]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag):
        # Pop back to the matching open element; a stray end tag is ignored.
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


# ---- Running the browser and the demo ----
@pytest.fixture(scope="module")
def browser() -> str:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found is None:
        message = f"no headless browser found (looked for {', '.join(BROWSERS)})"
        if os.environ.get("V2_MEMORY_REQUIRE_BROWSER") == "1":
            pytest.fail(message + " and V2_MEMORY_REQUIRE_BROWSER=1")
        pytest.skip(message)
    return found


def dump_dom(browser: str, url: str) -> tuple[str, Node]:
    """Load ``url`` in a fresh headless profile; return the DOM after scripts ran, raw and parsed."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [browser, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True, text=True, encoding="utf-8", timeout=60,
        )
    assert done.returncode == 0 and done.stdout.strip(), f"browser failed:\n{done.stderr[-2000:]}"
    return done.stdout, parse(done.stdout)


def run_demo(out: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "v2_memory/main.py", "--out", str(out), *args],
        cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    run_demo(out)
    return out


@pytest.fixture(scope="module")
def demo_dom(browser, demo_dir) -> Node:
    """The demo's page as loaded once from disk, for tests that only read it."""
    return dump_dom(browser, page_url(demo_dir))[1]


def read_trace(folder: Path) -> dict:
    return json.loads((folder / "trace.json").read_text(encoding="utf-8"))


def page_url(folder: Path, query: str = "") -> str:
    return (folder / "visualization.html").as_uri() + query


def scores(list_node: Node) -> list[str]:
    return [row.attrs["data-score"] for row in list_node.by_class("hit")]


# ---- No browser needed ----
def test_page_has_no_html_sinks_and_no_external_resources():
    """Trace text must never be parsed as markup, and the page must work offline."""
    html = PAGE.read_text(encoding="utf-8")
    for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]:
        assert sink not in html, sink
    assert not re.search(r"https?://", html), "the page names an internet URL"
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*//""", html), "protocol-relative URL"
    assert re.search(r"""<script src=["']trace\.js["']>""", html), "the page must load its sibling trace.js"


# ---- The article's demo, from disk ----
def test_page_shows_the_articles_table(browser, demo_dir):
    """Blind top-8 is 0.354, 0.277, 0.211, 0.204 x4, 0.083; only the first two pass 0.22."""
    _, dom = dump_dom(browser, page_url(demo_dir))
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    assert dom.by_id("query").text == QUERY
    assert dom.by_id("threshold-value").text == "0.22"
    assert dom.by_id("window-size").text == "4"

    blind = dom.by_id("blind-list")
    assert scores(blind) == ["0.354", "0.277", "0.211", "0.204", "0.204", "0.204", "0.204", "0.083"]
    assert [row.attrs["data-admitted"] for row in blind.by_class("hit")] == ["true"] * 2 + ["false"] * 6
    assert scores(dom.by_id("thresholded-list")) == ["0.354", "0.277"]
    count = dom.by_id("admitted-count")
    assert (count.attrs["data-admitted"], count.attrs["data-total"], count.text) == ("2", "8", "2 / 8")
    assert dom.by_id("slider-value").text == "0.22"  # the slider starts at the trace's threshold

    # Each user's tracks: the default user's summary, the guest's empty window after the erase.
    trace = json.loads((demo_dir / "trace.json").read_text(encoding="utf-8"))
    assert dom.by_id("summary-default").text == trace["summary_memory"]
    assert len(dom.by_id("recent-default").children) == len(trace["recent_messages"])
    assert "memory(0.354×" in dom.by_id("context").text
    # The guest's card is the state after the erase, and says so; the default user's is not marked.
    cards = {card.attrs["data-user-id"]: card for card in dom.by_class("user")}
    assert cards["guest"].attrs.get("data-erased") == "true" and "after erase_user" in cards["guest"].text
    assert "data-erased" not in cards["default"].attrs
    assert "after erase_user" in dom.by_id("erase-when").text

    # The erase: guest_records_after_erase is empty and every check passed.
    status = dom.by_id("erase-status")
    assert status.attrs["data-erased"] == "true"
    assert status.attrs["data-guest-records-empty"] == "true"
    checks = {li.attrs["data-check"]: li.attrs.get("data-pass") for li in dom.by_id("erase-checks").iter()
              if li.tag == "li"}
    assert checks["guest_records_after_erase"] == "true"
    assert all(checks[key] == "true" for key in trace["erase_verification"])


# ---- The slider, started from the URL ----
@pytest.mark.parametrize(("threshold", "admitted"), [("0.2", 7), ("0", 8), ("0.3", 1), ("1", 0)])
def test_slider_start_from_url_refilters_blind_list(browser, demo_dir, threshold, admitted):
    """At 0.2 the 0.211 and four 0.204 hits join the first two (7 of 8); 0.083 never passes 0.2."""
    _, dom = dump_dom(browser, page_url(demo_dir, f"?threshold={threshold}"))
    count = dom.by_id("admitted-count")
    assert (count.attrs["data-admitted"], count.text) == (str(admitted), f"{admitted} / 8")
    rows = dom.by_id("blind-list").by_class("hit")
    expected = [float(row.attrs["data-score"]) >= float(threshold) for row in rows]
    assert [row.attrs["data-admitted"] == "true" for row in rows] == expected
    assert dom.by_id("slider-value").text == threshold
    # The library's own answer does not move with the slider.
    assert scores(dom.by_id("thresholded-list")) == ["0.354", "0.277"]


# ---- Governance: the same query, every candidate admitted or rejected with its reasons ----
ECHO_IDS = ["4", "6", "8", "10"]  # the demo's four assistant replies, stored as if they were memories


def governed_rows(dom: Node) -> list[Node]:
    return dom.by_id("governed-table").by_class("admission")


def visible_ids(rows: list[Node]) -> list[str]:
    return [row.attrs["data-record-id"] for row in rows if "hidden" not in row.attrs]


def role_of(row: Node) -> str:
    return row.by_class("role")[0].attrs["data-role"]


def test_governed_table_shows_every_candidate_with_its_reasons(browser, demo_dir):
    """Effective = similarity × weight: 0.354 × 1.000 = 0.354 and 0.277 × 1.000 = 0.277 pass 0.22.

    The four assistant echoes score 0.204 like in the blind list, but weigh 0.01 (unverified model
    output), so 0.204 × 0.010 = 0.002: rejected, with reasons, never silently dropped.
    """
    trace = json.loads((demo_dir / "trace.json").read_text(encoding="utf-8"))
    _, dom = dump_dom(browser, page_url(demo_dir))
    assert "hidden" not in dom.by_id("governed-section").attrs
    assert dom.by_id("governed-route-kind").text == trace["governed"]["route"]["kind"] == "conversation"
    note = dom.by_id("governed-threshold")
    assert note.attrs["data-threshold"] == "0.22" and "Computed at the trace threshold 0.22" in note.text

    rows = governed_rows(dom)
    assert [row.attrs["data-record-id"] for row in rows] == [str(a["record_id"]) for a in trace["governed"]["admissions"]]
    assert len(rows) == 8 and visible_ids(rows) == [row.attrs["data-record-id"] for row in rows]
    admitted = [row.attrs["data-record-id"] for row in rows if row.attrs["data-admitted"] == "true"]
    assert admitted == ["3", "5"] == [str(i) for i in trace["governed"]["admitted"]]
    echoes = [row for row in rows if "unverified_model_output" in row.attrs["data-reasons"].split()]
    assert [row.attrs["data-record-id"] for row in echoes] == ECHO_IDS
    assert {role_of(row) for row in echoes} == {"assistant"}
    assert [n.text for n in rows[0].by_class("num")] == ["0.354", "× 1.000", "= 0.354"]
    assert [n.text for n in echoes[0].by_class("num")] == ["0.204", "× 0.010", "= 0.002"]
    assert [b.attrs["data-reason"] for b in echoes[0].by_class("reason")] == ["unverified_model_output", "below_threshold"]
    count = dom.by_id("governed-count")
    assert (count.text, count.attrs["data-admitted"], count.attrs["data-total"]) == ("admitted 2 / 8", "2", "8")


@pytest.mark.parametrize(("reason", "shown"), [
    ("unverified_model_output", ECHO_IDS),
    ("admitted", ["3", "5"]),
    ("below_threshold", ["7", "1", *ECHO_IDS]),
    ("sensitive", []),  # no row carries it: the filter still offers it, and the table is empty
])
def test_reason_filter_from_url_hides_other_rows(browser, demo_dir, reason, shown):
    _, dom = dump_dom(browser, page_url(demo_dir, f"?reason={reason}"))
    rows = governed_rows(dom)
    assert visible_ids(rows) == shown
    assert dom.by_id("governed-shown").attrs["data-shown"] == str(len(shown))
    assert dom.by_id("governed-count").text == "admitted 2 / 8"  # the filter hides rows, it does not re-judge them
    selected = [o for o in dom.by_id("reason-filter").iter() if o.tag == "option" and "selected" in o.attrs]
    assert [o.attrs["value"] for o in selected] == [reason if reason == "admitted" else f"reason:{reason}"]


def scene_side(dom: Node, key: str, side: str) -> Node:
    scene = next(n for n in dom.by_class("scene") if n.attrs["data-key"] == key)
    return next(n for n in scene.by_class("side") if n.attrs["data-side"] == side)


def admission_for(side: Node, needle: str) -> Node:
    return next(n for n in side.by_class("scene-admission") if needle in n.text)


def test_scenes_show_each_pollution_without_and_with_governance(browser, demo_dir):
    """CS201's query: without governance the CS202 deadline is admitted (0.5 ≥ 0.22) and reaches the
    prompt; with governance the same 0.5 is rejected for naming another identifier."""
    _, dom = dump_dom(browser, page_url(demo_dir))
    assert [n.attrs["data-key"] for n in dom.by_class("scene")] == [
        "correction", "negation", "identifier", "ended_session", "echo"]

    without, governed = scene_side(dom, "identifier", "without"), scene_side(dom, "identifier", "with")
    assert admission_for(without, "CS202").attrs["data-admitted"] == "true"
    assert admission_for(governed, "CS202").attrs["data-admitted"] == "false"
    assert admission_for(governed, "CS202").attrs["data-reasons"] == "identifier_mismatch"
    assert admission_for(governed, "CS201").attrs["data-admitted"] == "true"
    assert "CS202" in without.by_class("memory-lines")[0].text
    assert "CS202" not in governed.by_class("memory-lines")[0].text

    # The model's echo is rejected only with governance; the ended session adds nothing at all.
    echo = admission_for(scene_side(dom, "echo", "with"), "循环神经元")
    assert (echo.attrs["data-admitted"], echo.attrs["data-reasons"]) == ("false", "unverified_model_output")
    assert admission_for(scene_side(dom, "echo", "without"), "循环神经元").attrs["data-admitted"] == "true"
    assert scene_side(dom, "ended_session", "with").by_class("memory-lines")[0].text == "(无 / nothing)"


# ---- Health and the recorded sessions ----
def test_health_panel_shows_every_metric_with_its_rule_and_status(demo_dir, demo_dom):
    """Of the demo's 27 writes, 9 are model replies kept unverified and never admitted (quarantine,
    not pollution) and 4 are model replies the polluted integration labelled user input (trusted:
    pollution). 4 / 27 = 14.8 %, under 15 %: warn. The overall status is the worst of the nine:
    bad (model_output_as_user_input, 4)."""
    health = read_trace(demo_dir)["health"]
    assert "hidden" not in demo_dom.by_id("health-section").attrs
    overall = demo_dom.by_id("health-status")
    assert overall.attrs["data-status"] == health["status"] == "bad"
    tally = {}  # status -> metrics with it, in first-seen order, as the headline counts them
    for metric in health["metrics"]:
        tally[metric["status"]] = tally.get(metric["status"], 0) + 1
    assert overall.text.startswith("✗ 异常 bad") and overall.text.endswith(", ".join(f"{s} {n}" for s, n in tally.items()))

    cards = demo_dom.by_id("health-metrics").by_class("metric")
    assert [(c.attrs["data-name"], c.attrs["data-status"]) for c in cards] == [(m["name"], m["status"]) for m in health["metrics"]]
    assert len(cards) == len(health["metrics"]) == 9
    for card, metric in zip(cards, health["metrics"]):
        assert card.by_class("metric-shown")[0].text == metric["shown"]
        assert card.by_class("metric-rule")[0].text == "规则 rule: " + metric["rule"]
        assert card.by_class("status")[0].attrs["data-status"] == metric["status"]  # colour and words together
        counts = [n.text for n in card.by_class("metric-counts")]
        assert counts == ([] if metric["denominator"] is None else [f"{metric['numerator']} / {metric['denominator']}"])
    # Both keys have their own panels, so neither is repeated as raw JSON under "Other keys".
    assert not {"health", "sessions"} & {n.text for n in demo_dom.by_id("extra").iter() if n.tag == "summary"}
    pollution = cards[0]
    assert (pollution.attrs["data-name"], pollution.attrs["data-status"]) == ("pollution_rate", "warn")
    assert "污染率" in pollution.text and "Pollution rate" in pollution.text
    assert [n.text for n in pollution.by_class("metric-counts")] == ["4 / 27"]
    assert pollution.by_class("status")[0].text == "! 警告 warn"


def test_sessions_note_shows_the_first_difference_and_the_commands(demo_dir, demo_dom):
    sessions = read_trace(demo_dir)["sessions"]
    assert "hidden" not in demo_dom.by_id("sessions-section").attrs
    items = [n for n in demo_dom.by_id("sessions-recorded").iter() if n.tag == "li"]
    assert [n.attrs["data-session-id"] for n in items] == list(sessions["recorded"]) == ["s-clean", "s-polluted"]
    assert "learner-b" in items[1].text
    assert demo_dom.by_id("sessions-first-difference").text == sessions["first_difference"]
    assert "source 'llm_response' vs 'user_input'" in sessions["first_difference"]
    assert demo_dom.by_id("sessions-commands").text.splitlines() == [
        "python -m v2_memory diff --store <folder> --session-id s-clean --session-id s-polluted",
        "python -m v2_memory inspect --store <folder> --session-id s-polluted",
    ]


@pytest.mark.parametrize("variant", ["old trace", "malformed"])
def test_page_without_or_with_broken_optional_keys_still_loads(browser, demo_dir, tmp_path, variant):
    """An older trace has none of the keys; a broken one has them in the wrong shapes. Neither may crash the page."""
    trace = json.loads((demo_dir / "trace.json").read_text(encoding="utf-8"))
    if variant == "old trace":
        del trace["governed"], trace["scenes"], trace["health"], trace["sessions"]
    else:
        trace["governed"] = {"route": None, "admissions": "not a list"}
        trace["scenes"] = [None, 3, {"with_governance": [], "without_governance": {"admissions": [None]}}]
        trace["health"] = {"status": None, "metrics": [None, 3, {"name": None, "denominator": 0}]}
        trace["sessions"] = {"recorded": "not an object", "first_difference": None}
    (tmp_path / "trace.js").write_text(f"window.V2_MEMORY_TRACE = {json.dumps(trace)};\n", encoding="utf-8")
    shutil.copyfile(PAGE, tmp_path / "visualization.html")
    _, dom = dump_dom(browser, page_url(tmp_path, "?reason=unverified_model_output"))
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    assert dom.by_id("admitted-count").text == "2 / 8"  # the article's view is untouched
    sections = ["governed-section", "scenes-section", "legend-section", "health-section", "sessions-section"]
    hidden = {name: "hidden" in dom.by_id(name).attrs for name in sections}
    if variant == "old trace":
        assert hidden == dict.fromkeys(hidden, True)
    else:
        assert hidden == dict.fromkeys(hidden, False)
        assert dom.by_id("governed-count").text == "admitted 0 / 0"
        assert len(dom.by_class("scene")) == 3
        assert len(dom.by_class("metric")) == 3
        assert "do not differ" in dom.by_id("sessions-first-difference").text
        assert "--session-id <session-a> --session-id <session-b>" in dom.by_id("sessions-commands").text


# ---- Memory text is text ----
def assert_not_pwned(raw: str, dom: Node) -> None:
    assert not [n for n in dom.iter() if n.tag == "img"], "an <img> from the trace became an element"
    body = next(n for n in dom.iter() if n.tag == "body")
    assert "data-pwned" not in body.attrs
    assert 'data-pwned="1"' not in raw
    assert next(n for n in dom.iter() if n.tag == "title").text != "pwned"
    assert "&lt;img" in raw  # the payload is on the page, escaped


def test_hostile_query_is_shown_as_text(browser, tmp_path):
    run_demo(tmp_path, "--query", HOSTILE)
    raw, dom = dump_dom(browser, page_url(tmp_path))
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    assert dom.by_id("query").text == HOSTILE
    assert_not_pwned(raw, dom)


def evil(field: str) -> str:
    """A payload that would mark the page if it ever ran, tagged with the field it sits in."""
    return f"<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">{field}"


def test_hostile_text_in_every_field_is_shown_as_text(browser, tmp_path):
    """A trace written by hand with a payload in every string the page shows, keys included."""
    message = {"user_id": evil("uid"), "role": evil("role"), "content": evil("content")}
    hit = {"score": 0.5, "record": {"record_id": evil("rid"), **message}}
    route = {"kind": evil("route kind"), "reason": evil("route reason"), "tracks": [evil("track")], "identifiers": []}
    admission = {"record_id": evil("rid"), "role": evil("role"), "content": evil("admission"), "similarity": 0.5,
                 "weight": 1.0, "effective": 0.5, "admitted": False, "reasons": [evil("reason")]}
    result = {"record_id": 1, "source": evil("source"), "verified": True, "weight": 1.0, "reasons": [evil("write reason")],
              "fact": {"key": evil("fact key"), "value": evil("fact value"), "status": evil("status")}}
    side = {"writes": [{"role": evil("role"), "content": evil("write"), "result": result}], "route": route,
            "admissions": [admission], "memory_lines": [evil("memory line")]}
    trace = {
        "query": evil("query"), "threshold": 0.22, "top_k": 1, "window_size": 4,
        "summary_memory": evil("summary"), "recent_messages": [message],
        "blind_top_k": [hit], "thresholded": [hit], "context": evil("context"),
        "erase_receipt": {"user_id": evil("erased"), "removed": {evil("track"): 1}},
        "guest_records_after_erase": [hit["record"]],
        "erase_verification": {evil("check"): evil("value")},
        "users": {evil("user"): {"summary": evil("user summary"), "recent_messages": [message]}},
        "governed": {"route": route, "admissions": [admission], "admitted": []},
        "scenes": [{
            "key": evil("scene key"), "title": evil("scene title"), "query": evil("scene query"),
            "read_scope": {evil("scope key"): evil("scope value")},
            "without_governance": side, "with_governance": side,
        }],
        "health": {"status": evil("overall"), "metrics": [{
            "name": evil("metric name"), "status": evil("metric status"), "rule": evil("rule"), "shown": evil("shown"),
            "numerator": evil("numerator"), "denominator": evil("denominator"),
        }]},
        "sessions": {"recorded": {evil("session"): evil("learner")}, "first_difference": evil("first difference")},
        evil("new key"): evil("new value"),
    }
    (tmp_path / "trace.js").write_text(f"window.V2_MEMORY_TRACE = {json.dumps(trace)};\n", encoding="utf-8")
    shutil.copyfile(PAGE, tmp_path / "visualization.html")
    raw, dom = dump_dom(browser, page_url(tmp_path, "?reason=" + urllib.parse.quote(evil("url reason"))))
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    assert_not_pwned(raw, dom)
    page_text = dom.text
    for field in ["query", "summary", "content", "context", "erased", "user summary", "new key",
                  "route kind", "route reason", "track", "admission", "reason", "url reason",
                  "scene title", "scene query", "scope key", "scope value", "write", "source", "write reason",
                  "fact key", "fact value", "memory line", "overall", "metric name", "metric status", "rule",
                  "shown", "numerator", "denominator", "session", "learner", "first difference"]:
        assert evil(field) in page_text, field
    assert dom.by_class("scene")[0].attrs["data-key"] == evil("scene key")
    assert governed_rows(dom)[0].attrs["data-reasons"] == evil("reason")
    assert dom.by_class("metric")[0].attrs["data-name"] == evil("metric name")
    # In the commands a reader copies, the session id is one quoted shell word.
    quoted = "'" + evil("session").replace("'", "'\\''") + "'"
    assert f"diff --store <folder> --session-id {quoted} --session-id <session-b>" in dom.by_id("sessions-commands").text
    for field in ["value", "new value"]:  # values the page shows as JSON, so their quotes are escaped
        assert json.dumps(evil(field)) in page_text, field
    # A leaked guest record must turn the erase verdict red.
    assert dom.by_id("erase-status").attrs["data-erased"] == "false"


# ---- No data next to the page ----
def test_page_without_trace_asks_for_the_demo(browser, tmp_path):
    shutil.copyfile(PAGE, tmp_path / "visualization.html")
    _, dom = dump_dom(browser, page_url(tmp_path))
    status = dom.by_id("load-status")
    assert status.attrs["data-state"] == "missing"  # not "error": nothing threw
    assert "python v2_memory/main.py" in status.text
    assert "hidden" not in dom.by_id("missing").attrs
    assert "hidden" in dom.by_id("app").attrs
    assert dom.by_id("trace-file").attrs["type"] == "file"


# ---- Served over HTTP with only trace.json: the page fetches it ----
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_page_over_http_fetches_trace_json(browser, demo_dir, tmp_path):
    for name in ["visualization.html", "trace.json"]:  # no trace.js
        shutil.copyfile(demo_dir / name, tmp_path / name)
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            _, dom = dump_dom(browser, f"http://127.0.0.1:{server.server_port}/visualization.html")
        finally:
            server.shutdown()
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    assert "trace.json" in dom.by_id("load-status").text
    assert dom.by_id("admitted-count").text == "2 / 8"


def test_scene_shows_what_the_user_did_before_asking(browser, demo_dir):
    """The negation scene confirms the fact between writing and asking; the page says so."""
    _, dom = dump_dom(browser, page_url(demo_dir))
    text = dom.by_id("scenes").text
    assert 'confirm_fact("default", "recommend")' in text and 'end_session("default", "s1")' in text


# ---- The first screen, measured: Chromium driven over its DevTools pipe, at a real viewport size ----
# --dump-dom always lays the page out at 500 × 701, whatever --window-size says; a screenshot test needs
# the size a reader has. So here the browser is driven over --remote-debugging-pipe: JSON messages, each
# ended by a NUL byte, on file descriptors 3 (to the browser) and 4 (from it).
SCREENS = {"desktop": (1400, 900, False), "phone": (390, 844, True)}


class DevTools:
    """One headless Chromium, one page: set the viewport, load a URL, evaluate a script, take a screenshot."""

    def __init__(self, browser: str) -> None:
        import fcntl

        self._profile = tempfile.TemporaryDirectory()
        to_browser, self._to = os.pipe()
        self._from, from_browser = os.pipe()
        # Above any descriptor the child may already use, so the dup2 onto 3 and 4 cannot clobber either.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 20) for fd in (to_browser, from_browser)]

        def wire() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        flags = [f for f in BROWSER_FLAGS if not f.startswith("--virtual-time-budget")]
        self.process = subprocess.Popen(
            [browser, *flags, f"--user-data-dir={self._profile.name}", "--hide-scrollbars", "--remote-debugging-pipe"],
            preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_browser, from_browser, *high):
            os.close(fd)
        self._buffer, self._next_id, self._events = b"", 0, []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)

    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        os.write(self._to, json.dumps(message).encode("utf-8") + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                assert "error" not in reply, (method, reply["error"])
                return reply["result"]
            self._events.append(reply)

    def _receive(self, timeout: float = 60) -> dict:
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from], [], [], timeout)
            assert ready, "the browser did not answer"
            chunk = os.read(self._from, 1 << 20)
            assert chunk, "the browser closed the pipe"
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str, width: int, height: int, mobile: bool) -> None:
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, session=True)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        # A new document fires "load"; a URL that differs only after "#" stays in the same document.
        while not any(e.get("method") in ("Page.loadEventFired", "Page.navigatedWithinDocument") for e in self._events):
            self._events.append(self._receive())

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        import base64

        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]))
        keep = os.environ.get("V2_MEMORY_SCREENSHOT_DIR")  # to look at them yourself: set it to a folder
        if keep:
            shutil.copyfile(path, Path(keep) / path.name)
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (AssertionError, OSError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to)
        os.close(self._from)
        self._profile.cleanup()


@pytest.fixture(scope="module")
def devtools(browser):
    tools = DevTools(browser)
    yield tools
    tools.close()


# Geometry as the reader sees it, and the two things no dump can show: keys that break mid-word, and
# text after a memory that a bidi override moved.
MEASURE = """(() => {
  const box = (node) => { const r = node.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const all = (selector) => [...document.querySelectorAll(selector)];
  // A key may break only where a <wbr> sits: report every key whose text moves to a new line elsewhere.
  const midWord = (key) => {
    let lastTop = null, allowed = false;
    for (const child of key.childNodes) {
      if (child.nodeType !== Node.TEXT_NODE) { allowed = true; continue; }
      for (let i = 0; i < child.data.length; i++) {
        const range = document.createRange();
        range.setStart(child, i); range.setEnd(child, i + 1);
        const r = range.getClientRects()[0];
        if (!r) continue;
        if (lastTop !== null && r.top > lastTop + 2 && !allowed) return true;
        lastTop = r.top; allowed = false;
      }
    }
    return false;
  };
  const keys = all(".key").filter((k) => k.getClientRects().length);
  // On a left-to-right line, what follows a memory text (its record id) must stay to its right.
  const moved = all(".text").filter((t) => {
    const memory = t.querySelector(":scope > bdi"), rid = t.querySelector(":scope > .rid");
    if (!memory || !rid) return false;
    const b = rid.getBoundingClientRect(), middle = (b.top + b.bottom) / 2;
    // The memory's pieces on the record id's line (a line box holds both when they overlap vertically).
    const sameLine = [...memory.getClientRects()].filter((r) => r.top <= middle && middle <= r.bottom);
    return sameLine.some((r) => b.left < r.right - 1);
  });
  return {
    viewport: {width: innerWidth, height: innerHeight},
    sections: Object.fromEntries(all("#app > section").map((s) => [s.id, box(s)])),
    heading: box(document.querySelector("#blind-section h2")),
    slider: box(document.getElementById("threshold-slider")),
    count: box(document.getElementById("admitted-count")),
    rows: all("#blind-list .hit").map(box),
    bars: all("#blind-list .hit .bar").map(box),
    keys: keys.length,
    brokenKeys: keys.filter(midWord).map((k) => k.textContent),
    moved: moved.map((t) => t.textContent),
  };
})()"""


def read_png(path: Path) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and RGB rows of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    import struct
    import zlib

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunks.setdefault(kind, []).append(data[at + 8:at + 8 + length])
        at += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    channels = 3 if color == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks[b"IDAT"])), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the row filter: none, sub, up, average, Paeth
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


BAR = (0x3B, 0x6F, 0xD8)  # --bar: the score bars of the admitted hits


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_blind_vs_threshold_panel_is_on_the_first_screen(devtools, demo_dir, tmp_path, screen):
    """At 1400 px and at 390 px wide, without scrolling: the panel's heading, the slider, the count and
    the first hits — the two admitted and the first rejected, so the threshold's cut shows — and, on a
    desktop, all eight. Health and the session diff come after it."""
    width, height, mobile = SCREENS[screen]
    devtools.open(page_url(demo_dir), width, height, mobile)
    geometry = devtools.evaluate(MEASURE)
    assert geometry["viewport"] == {"width": width, "height": height}
    first = 8 if screen == "desktop" else 3
    for name, item in [("heading", geometry["heading"]), ("slider", geometry["slider"]), ("count", geometry["count"]),
                       *[(f"row {i + 1}", row) for i, row in enumerate(geometry["rows"][:first])]]:
        assert 0 <= item["top"] and item["bottom"] <= height, (name, item)
    sections = geometry["sections"]
    assert sections["health-section"]["top"] > sections["blind-section"]["bottom"]

    # The screenshot is what the reader sees: the admitted hits' blue bars are painted where measured.
    shot = devtools.screenshot(tmp_path / f"first-screen-{screen}-{width}px.png")
    shot_width, shot_height, pixels = read_png(shot)
    assert (shot_width, shot_height) == (width, height)
    for bar in geometry["bars"][:2]:
        y, x = int((bar["top"] + bar["bottom"]) / 2), int(bar["left"]) + 2
        assert pixels[y][x] == BAR, (bar, pixels[y][x])


@pytest.mark.parametrize("screen", list(SCREENS))
def test_no_key_breaks_mid_word(devtools, demo_dir, screen):
    """Metric names, reason codes and check names wrap only after an underscore."""
    devtools.open(page_url(demo_dir), *SCREENS[screen])
    geometry = devtools.evaluate(MEASURE)
    assert geometry["keys"] > 40 and geometry["brokenKeys"] == []


# ---- The story's order, and the contents ----
STORY = ["query-section", "blind-section", "context-section", "users-section", "erase-section", "governed-section",
         "scenes-section", "legend-section", "health-section", "sessions-section", "extra-section"]


def test_the_page_tells_the_story_in_order_with_contents(demo_dom):
    """What the page shows, in one line; then the lesson (query, blind vs threshold, context, erase),
    then governance, and health and the session diff last. The contents link every section shown."""
    header = next(n for n in demo_dom.iter() if n.tag == "header")
    assert header.by_id("intro").text.count("What this page shows") == 1
    app = demo_dom.by_id("app")
    assert [n.attrs["id"] for n in app.children if isinstance(n, Node) and n.tag == "section"] == STORY
    toc = demo_dom.by_id("toc")
    assert "hidden" not in toc.attrs
    links = [n for n in toc.iter() if n.tag == "a"]
    assert [a.attrs["href"] for a in links] == ["#" + s for s in STORY[:-1]]
    assert all("hidden" not in a.attrs for a in links)  # the demo's trace has every section


def test_contents_leave_out_the_sections_an_old_trace_lacks(browser, demo_dir, tmp_path):
    trace = read_trace(demo_dir)
    del trace["governed"], trace["scenes"], trace["health"], trace["sessions"]
    (tmp_path / "trace.js").write_text(f"window.V2_MEMORY_TRACE = {json.dumps(trace)};\n", encoding="utf-8")
    shutil.copyfile(PAGE, tmp_path / "visualization.html")
    _, dom = dump_dom(browser, page_url(tmp_path))
    shown = [a.attrs["href"] for a in dom.by_id("toc").iter() if a.tag == "a" and "hidden" not in a.attrs]
    assert shown == ["#query-section", "#blind-section", "#context-section", "#users-section", "#erase-section"]


# ---- What depends on the threshold ----
def fixed_notes(dom: Node) -> list[Node]:
    return [dom.by_id(i) for i in ("thresholded-fixed", "context-fixed", "governed-threshold")]


def test_panels_at_the_trace_threshold_say_so_and_how_to_see_the_sliders(browser, demo_dir):
    """retrieve(), the context and the governed view ran in the demo at 0.22. At the slider's 0.22 they
    just say so; at 0.3 each also gives the command that shows the library's answer at 0.3."""
    for note in fixed_notes(demo_dom_at(browser, demo_dir, "")):
        assert (note.attrs["data-threshold"], note.attrs["data-differs"]) == ("0.22", "false")
        assert "Computed at the trace threshold 0.22; the slider does not move it." in note.text
        assert "--threshold" not in note.text
    for note in fixed_notes(demo_dom_at(browser, demo_dir, "?threshold=0.3")):
        assert note.attrs["data-differs"] == "true"
        assert "python v2_memory/main.py --threshold 0.3" in note.text


def demo_dom_at(browser: str, folder: Path, query: str) -> Node:
    return dump_dom(browser, page_url(folder, query))[1]


def test_the_url_follows_the_slider_and_the_filter(devtools, demo_dir):
    """Moving the slider rewrites ?threshold= (keeping ?reason=), so a copied link shows the same view."""
    devtools.open(page_url(demo_dir, "?reason=admitted"), 1400, 900, False)
    state = devtools.evaluate("""(() => {
      const slider = document.getElementById("threshold-slider");
      slider.value = "0.2";
      slider.dispatchEvent(new Event("input"));
      const after = {search: location.search, count: document.getElementById("admitted-count").textContent,
                     differs: document.getElementById("context-fixed").dataset.differs};
      const filter = document.getElementById("reason-filter");
      filter.value = "reason:unverified_model_output";
      filter.dispatchEvent(new Event("change"));
      after.filtered = location.search;
      filter.value = "all";
      filter.dispatchEvent(new Event("change"));
      after.all = location.search;
      return after;
    })()""")
    assert state["search"] == "?reason=admitted&threshold=0.2"
    assert (state["count"], state["differs"]) == ("7 / 8", "true")
    assert state["filtered"] == "?reason=unverified_model_output&threshold=0.2"
    assert state["all"] == "?threshold=0.2"


@pytest.mark.parametrize(("query", "problems"), [
    ("?threshold=1.5", {"threshold": "?threshold=1.5 超出 [0, 1] is outside [0, 1]"}),
    ("?threshold=-0.1", {"threshold": "?threshold=-0.1 超出 [0, 1] is outside [0, 1]"}),
    ("?threshold=abc&reason=not_a_reason", {"threshold": "?threshold=abc 不是数字 is not a number",
                                            "reason": "?reason=not_a_reason："}),
    ("?threshold=0.3&reason=sensitive", {}),  # a known reason no row has: an empty table, not a problem
])
def test_url_values_the_page_cannot_use_are_reported(browser, demo_dir, query, problems):
    dom = demo_dom_at(browser, demo_dir, query)
    notes = dom.by_id("url-notes")
    items = {li.attrs["data-param"]: li.text for li in notes.iter() if li.tag == "li"}
    assert set(items) == set(problems) and ("hidden" in notes.attrs) == (not problems)
    for param, start in problems.items():
        assert items[param].startswith(start), items[param]
    if "threshold" in problems:  # the slider falls back to the trace's threshold, and says so
        assert dom.by_id("slider-value").text == "0.22" and "using the trace's threshold 0.22" in items["threshold"]
    if "reason" in problems:  # an unknown reason shows every row, next to the filter too
        assert visible_ids(governed_rows(dom)) == [r.attrs["data-record-id"] for r in governed_rows(dom)]
        assert "is not a reason this page knows" in dom.by_id("reason-problem").text


def test_why_the_demo_uses_022_and_what_02_would_keep(demo_dom):
    """At 0.2 the 0.211 and the four 0.204 echoes join the first two: 7 of 8, 4 of them the agent's replies;
    the article's 0.22 sits just above the best echo, 0.204."""
    why = demo_dom.by_id("threshold-why")
    assert (why.attrs["data-library"], why.attrs["data-passing"], why.attrs["data-passing-echoes"]) == ("0.2", "7", "4")
    assert "just above the agent's own replies (best 0.204)" in why.text and "7 of these 8 would pass" in why.text
    assert [a.attrs["href"] for a in why.iter() if a.tag == "a"] == ["?threshold=0.2"]


def test_context_and_governed_view_show_one_weight_and_say_why(demo_dom):
    """Both were read before this query used any memory: ×1.00 in the context and × 1.000 in the table."""
    context = demo_dom.by_id("context").text
    weights = {c: w for w, c in re.findall(r"memory\([\d.]+×([\d.]+)\): \w+: (.*)", context)}
    rows = {row.by_class("text")[0].children[0].text: row.by_class("num")[1].text for row in governed_rows(demo_dom)}
    assert weights and all(rows[content] == f"× {float(w):.3f}" for content, w in weights.items())
    assert "multiplies its weight by 1.25 (up to 1.00" in demo_dom.by_id("weights-note").text


def test_every_metric_card_has_a_bilingual_title(demo_dom):
    for card in demo_dom.by_id("health-metrics").by_class("metric"):
        title = next(n for n in card.iter() if n.tag == "h3")
        assert title.by_class("en") and re.search(r"[\u4e00-\u9fff]", title.text), card.attrs["data-name"]
        assert card.by_class("metric-code")[0].text == card.attrs["data-name"]


# ---- Bidirectional overrides in memory text ----
BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE, never closed: everything after it on its line would run backwards


def test_bidi_overrides_in_memory_text_cannot_reorder_the_rest_of_a_line(browser, devtools, demo_dir, tmp_path):
    """Every text from the trace that holds an override sits alone in its own <bdi> (an isolate), and on
    screen the record id after a memory still follows it."""
    trace = read_trace(demo_dir)
    for hit in trace["blind_top_k"] + trace["thresholded"]:
        hit["record"]["content"] = BIDI + hit["record"]["content"] + " abc"
    for admission in trace["governed"]["admissions"]:
        admission["content"] = BIDI + admission["content"]
        admission["reasons"] = [BIDI + r for r in admission["reasons"]]
    trace["query"] = BIDI + trace["query"]
    trace["context"] = "\n".join(BIDI + line for line in trace["context"].splitlines())
    trace["sessions"]["first_difference"] = BIDI + trace["sessions"]["first_difference"]
    trace["health"]["metrics"][0]["name"] = BIDI + "pollution_rate"
    for user in trace["users"].values():
        user["summary"] = BIDI + user["summary"]
        user["recent_messages"] = [{**m, "content": BIDI + m["content"], "role": BIDI + m["role"]} for m in user["recent_messages"]]
    (tmp_path / "trace.js").write_text(f"window.V2_MEMORY_TRACE = {json.dumps(trace)};\n", encoding="utf-8")
    shutil.copyfile(PAGE, tmp_path / "visualization.html")

    _, dom = dump_dom(browser, page_url(tmp_path, "?reason=" + urllib.parse.quote(BIDI + "below_threshold")))
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    holders, parents = 0, {}
    for node in dom.iter():
        for child in node.children:
            if isinstance(child, str) and re.search("[\u202a-\u202e\u2066-\u2069]", child):
                holders += 1
                assert node.tag in ("bdi", "option", "script"), (node.tag, node.attrs, child[:40])
                if node.tag == "bdi":  # alone in it: the isolate ends where that text ends
                    texts = [c for c in node.children if isinstance(c, str)]
                    assert texts == [child] or "key" in (node.attrs.get("class") or ""), node.children
                parents[node.tag] = parents.get(node.tag, 0) + 1
    assert holders > 30 and parents.get("option", 0) == 0  # options show the code points instead
    assert any("\\u202E" in o.text for o in dom.by_id("reason-filter").iter() if o.tag == "option")

    devtools.open(page_url(tmp_path), 1400, 900, False)
    assert devtools.evaluate(MEASURE)["moved"] == []


# ---- The first screen: the three lessons; Chinese without a Chinese font ----
def test_the_first_screen_names_the_three_lessons_with_their_evidence(demo_dom):
    """Threshold, isolation and the erase proof, each a line of evidence from the trace and a link to
    its section, in the header, before the first section (the first-screen test measures the rest)."""
    header = next(n for n in demo_dom.iter() if n.tag == "header")
    lessons = header.by_id("lessons")
    assert "hidden" not in lessons.attrs
    cards = {card.attrs["id"]: card for card in lessons.by_class("lesson")}
    assert list(cards) == ["lesson-threshold", "lesson-isolation", "lesson-erase"]
    assert all(card.attrs["data-pass"] == "true" for card in cards.values())
    assert "Blind top-8 returned 8 memories, 4 of them the agent's own replies; the threshold 0.22 kept 2." in \
        cards["lesson-threshold"].text
    assert "never reached another user's context" in cards["lesson-isolation"].text
    assert "not one byte left in the store file" in cards["lesson-erase"].text
    links = {a.attrs["href"] for card in cards.values() for a in card.iter() if a.tag == "a"}
    assert links == {"#blind-section", "#users-section", "#erase-section"}


def test_a_failed_erase_check_shows_on_the_first_screen(browser, demo_dir, tmp_path):
    trace = read_trace(demo_dir)
    trace["erase_verification"]["bytes_in_store_file"] = True  # as if the guest's note were still on disk
    (tmp_path / "trace.js").write_text(f"window.V2_MEMORY_TRACE = {json.dumps(trace)};\n", encoding="utf-8")
    shutil.copyfile(PAGE, tmp_path / "visualization.html")
    _, dom = dump_dom(browser, page_url(tmp_path))
    assert dom.by_id("lesson-erase").attrs["data-pass"] == "false"
    assert "Not every erase check passed." in dom.by_id("lesson-erase").text


def test_without_a_chinese_font_the_page_says_so_and_keeps_the_english(demo_dom):
    """The page checks whether a Chinese character draws differently from a character no font has;
    this machine's answer must match fontconfig's."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        pytest.skip("fontconfig's fc-list is not installed: cannot tell which fonts Chromium has")
    chinese = subprocess.run([fc_list, ":lang=zh"], capture_output=True, text=True).stdout.strip() != ""
    html = next(n for n in demo_dom.iter() if n.tag == "html")
    assert html.attrs["data-cjk-font"] == str(chinese).lower()
    note = demo_dom.by_id("cjk-note")
    assert ("hidden" in note.attrs) == chinese and "English is beside every label" in note.text
