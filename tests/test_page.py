"""visualization.html in a real browser: the article's table, the slider, the erase, and hostile text.

The page is read by a headless Chromium with ``--dump-dom``: Chromium loads the page from disk
(``file://``, as a reader would), runs its scripts, and prints the resulting DOM, which we parse with
the standard library. A dump cannot drag a slider, so the page reads ``?threshold=`` from its URL.

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
    assert "memory(0.354)" in dom.by_id("context").text

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
    trace = {
        "query": evil("query"), "threshold": 0.22, "top_k": 1, "window_size": 4,
        "summary_memory": evil("summary"), "recent_messages": [message],
        "blind_top_k": [hit], "thresholded": [hit], "context": evil("context"),
        "erase_receipt": {"user_id": evil("erased"), "removed": {evil("track"): 1}},
        "guest_records_after_erase": [hit["record"]],
        "erase_verification": {evil("check"): evil("value")},
        "users": {evil("user"): {"summary": evil("user summary"), "recent_messages": [message]}},
        evil("new key"): evil("new value"),
    }
    (tmp_path / "trace.js").write_text(f"window.V2_MEMORY_TRACE = {json.dumps(trace)};\n", encoding="utf-8")
    shutil.copyfile(PAGE, tmp_path / "visualization.html")
    raw, dom = dump_dom(browser, page_url(tmp_path))
    assert dom.by_id("load-status").attrs["data-state"] == "loaded"
    assert_not_pwned(raw, dom)
    page_text = dom.text
    for field in ["query", "summary", "content", "context", "erased", "user summary", "new key"]:
        assert evil(field) in page_text, field
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
