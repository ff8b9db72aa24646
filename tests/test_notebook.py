"""Notebook display: every value's repr and HTML table, and the example notebook, executed.

The unit tests build values holding hostile text (markup, ampersands, quotes, bidi overrides,
personal data, huge texts) and check what a reader would see. The notebook test runs
``examples/quickstart.ipynb`` in a real IPython kernel (nbclient + ipykernel, the ``test`` extra)
and checks its outputs. Without nbclient that test skips, unless ``V2_MEMORY_REQUIRE_NOTEBOOK=1``
(CI), where it fails.
"""
from __future__ import annotations

import getpass
import html
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from v2_memory import EraseReceipt, GovernancePolicy, MemoryManager, Message, StoreClosedError, WriteResult
from v2_memory.display import HTML_CHARS, Shown, html_text, number, plain
from v2_memory.governance.admission import Admission, Explanation
from v2_memory.governance.router import route
from v2_memory.observe.health import HealthReport, Metric

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "examples" / "quickstart.ipynb"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = '<script>alert("x")</script> & \'q\' \u202eevil\u2066 <b>bold</b>'
TAGS = {"div", "table", "caption", "b", "bdi", "tbody", "thead", "tr", "th", "td", "p"}


class _Reader(HTMLParser):
    """Collects the tags an HTML fragment uses and every piece of text, noting whether it sits
    inside a <bdi>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.open: list[str] = []
        self.texts: list[tuple[str, bool]] = []  # (text, inside a bdi)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data):
        if data.strip():
            self.texts.append((data, "bdi" in self.open))


def read_html(fragment: str) -> _Reader:
    reader = _Reader()
    reader.feed(fragment)
    reader.close()
    assert not reader.open, f"unclosed tags {reader.open}"
    return reader


def admission(content: str = "如何治理记忆污染？", weight: float = 0.8573749999999999, **record) -> Admission:
    record = {"record_id": 7, "user_id": "alice", "role": "user", "source": "user_input", "content": content, **record}
    return Admission(record, 0.35355339059327373, weight, 0.35355339059327373 * weight, 0.22, True)


def every_value(text: str) -> list:
    """One of each displayed kind, with ``text`` in every text field it has."""
    fact = {"key": text, "value": text, "polarity": -1, "status": "pending"}
    explanation = Explanation(text, route(text), (admission(text), admission(text, weight=0.01)), (fact,))
    metric = Metric(text, 0.123456789, "%", "ok", text, 1, 8, (3,), note=text)
    return [admission(text), explanation,
            WriteResult(1, ("window",), "user_input", None, True, 0.8573749999999999, (text,), fact=fact,
                        facts=(fact,), question=text),
            EraseReceipt(text, 1, 0, 1, 1, 0, 2, (f"/tmp/{text}.json",)), HealthReport((metric,)), metric]


# -- escaping: every text is text, isolated ---------------------------------------------------------


@pytest.mark.parametrize("value", every_value(HOSTILE), ids=lambda v: type(v).__name__)
def test_hostile_text_is_shown_as_text_in_every_html_table(value):
    """The stored markup reaches the page as characters: no <script> or <b> of its own, the
    ampersand and both quotes escaped, the bidi overrides only inside a <bdi>."""
    fragment = value._repr_html_()
    assert "<script" not in fragment and "alert(&quot;x&quot;)" in fragment
    assert "&amp;" in fragment and "&#x27;q&#x27;" in fragment and "&lt;b&gt;bold&lt;/b&gt;" in fragment
    reader = read_html(fragment)
    assert reader.tags <= TAGS
    assert all(inside for _, inside in reader.texts), "every text sits in a <bdi>"
    assert any(HOSTILE in text for text, _ in reader.texts)  # shown whole, as typed


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=30), st.one_of(st.text(max_size=60), st.floats(), st.integers(),
                                                         st.none(), st.lists(st.text(max_size=10), max_size=3))),
                max_size=5),
       st.lists(st.text(max_size=20), min_size=1, max_size=3))
def test_any_keys_and_values_render_as_escaped_isolated_text(fields, headers):
    """Keys, headers and values alike: whatever they hold, the HTML uses only the display's own
    tags, and unescaping each <bdi> gives back exactly the shown text."""
    row = tuple(value for _, value in fields)
    fragment = Shown("<name>", tuple(fields), tuple(headers), (row,)).html()
    assert set(re.findall(r"<(\w+)", fragment)) <= TAGS
    bdis = re.findall(r"<bdi>(.*?)</bdi>", fragment, re.S)
    expected = ["<name>", *(plain(x) for pair in fields for x in pair), *map(plain, headers), *map(plain, row)]
    assert sorted(html.unescape(b) for b in bdis) == sorted(expected)
    assert all("<" not in b and ">" not in b and '"' not in b for b in bdis)


def test_bidi_overrides_cannot_reorder_the_rest_of_a_row():
    """U+202A–U+202E and U+2066–U+2069, one per text: each stays inside its own isolate in HTML,
    and is written as an escape (never obeyed) in the repr."""
    for char in BIDI:
        value = admission(f"abc{char}def")
        fragment = value._repr_html_()
        cell = next(text for text, _ in read_html(fragment).texts if char in text)
        assert f"<bdi>{html.escape(cell)}</bdi>" in fragment
        assert char not in repr(value) and f"\\u{ord(char):04x}" in repr(value)


def test_personal_data_is_redacted_in_the_display_not_in_the_value(clock):
    """With the "isolate" policy a record keeps its phone number raw in the store (a read rejects
    it); the display, which a notebook saves and shares, shows ``[mobile]`` instead."""
    policy = GovernancePolicy(sensitive_policy="isolate")
    with MemoryManager(store_path=None, threshold=0.1, governance=policy, clock=clock) as memory:
        memory.add(Message("user", "我的手机号是 13800138000，记住", user_id="ann"))
        explanation = memory.explain("手机号", "ann")
    assert explanation[0].record["content"] == "我的手机号是 13800138000，记住"
    for shown in (repr(explanation), explanation._repr_html_(), repr(explanation[0]), explanation[0]._repr_html_()):
        assert "13800138000" not in shown and "[mobile]" in shown


# -- numbers: rounded for reading, exact in the value ---------------------------------------------


def test_numbers_are_rounded_for_display_and_unchanged_in_the_value():
    value = admission()
    assert "weight=0.857" in repr(value) and "similarity=0.354" in repr(value) and "effective=0.303" in repr(value)
    assert "<bdi>0.857</bdi>" in value._repr_html_()
    assert "0.85737" not in repr(value) + value._repr_html_()
    assert value.weight == 0.8573749999999999 and value.similarity == 0.35355339059327373


def test_number_keeps_a_digit_for_tiny_values_and_writes_non_finite_ones():
    """0.01 × 0.0354 = 0.000354 rounds to 0.0 at three places; shown as 0.0004 it is not mistaken
    for nothing."""
    assert [number(v) for v in (0.8573749999999999, 0.000354, 1e-9, 0.0, 2.0, float("inf"), float("nan"))] == [
        "0.857", "0.0004", "1e-09", "0.0", "2.0", "inf", "nan"]


def test_health_shows_shares_as_percent_with_their_counts():
    report = every_value("x")[4]
    assert "12.3 %" in repr(report) and "1 / 8" in repr(report) and "12.3 %" in report._repr_html_()


# -- clipping: long texts are cut in the repr, never the record's identity --------------------------


def test_long_texts_are_clipped_in_the_repr_but_the_record_stays_named():
    long = "记忆污染" * 1000 + "THE_END"
    value = admission(long)
    text = repr(value)
    assert len(text) < 400 and "…" in text and "THE_END" not in text
    assert text.startswith("Admission(record_id=7, admitted=True")
    explanation = Explanation("q", route("q"), (value,))
    row = repr(explanation).splitlines()[3]
    assert row.split()[0] == "7" and row.endswith("…")
    fragment = value._repr_html_()
    assert f"({len(long):,} characters)" in fragment and len(fragment) < HTML_CHARS * 3
    assert len(html_text("x" * 10**6)) < HTML_CHARS + 100  # bounded however large the memory


def test_texts_with_newlines_stay_on_their_row_in_the_repr():
    explanation = Explanation("q", route("q"), (admission("第一行\n第二行\r\n\x1b[31m红"),))
    lines = repr(explanation).splitlines()
    assert len(lines) == 4 and "\x1b" not in repr(explanation) and "\\x1b" in lines[3]


def test_many_candidates_are_counted_not_hidden():
    many = tuple(admission(f"memory {i}", record_id=i) for i in range(1, 31))
    explanation = Explanation("q", route("q"), many)
    text = repr(explanation)
    assert len(text.splitlines()) == 1 + 2 + 20 + 1 and "… and 10 more" in text  # head, table head, 20 rows, count
    assert explanation._repr_html_().count("<tr><td") == 30  # HTML has room for all of them


def test_each_field_a_write_found_is_shown_and_empty_ones_are_left_out():
    plain_write = WriteResult(3, ("window", "long_term"), "llm_response", None, False, 0.01,
                              ("unverified_model_output",))
    assert repr(plain_write) == ("WriteResult(record_id=3, stored_in=[window, long_term], source='llm_response', "
                                 "domain=None, verified=False, weight=0.01, reasons=[unverified_model_output])")
    fact_write = every_value("香菜")[2]
    assert "facts=[persona:香菜 = NOT 香菜 (" in repr(fact_write)  # the repr clips it at 60 columns
    assert "<bdi>[persona:香菜 = NOT 香菜 (用户明确拒绝 / the user said no) [pending]]</bdi>" in fact_write._repr_html_()


# -- the manager ---------------------------------------------------------------------------------


def test_the_manager_shows_backend_path_users_threshold_and_scorer(tmp_path, clock):
    with MemoryManager(threshold=0.22, store_path=tmp_path / "m.sqlite3", scorer="bm25", clock=clock) as memory:
        for user in ["u1", "u10", "<u>"]:
            memory.add(Message("user", "记住我喜欢绿茶", user_id=user))
        text = repr(memory)
        assert re.fullmatch(r"MemoryManager\(backend='sqlite', path='[^']*/m\.sqlite3', users=\[u1, u10, <u>\], "
                            r"threshold=0\.22, scorer='bm25', window_size=4, governance='on'\)", text), text
        fragment = memory._repr_html_()
        assert "&lt;u&gt;" in fragment and f"<bdi>{html.escape(str(tmp_path / 'm.sqlite3'))}</bdi>" in fragment
    with MemoryManager(store_path=None, governance=False) as memory:
        assert "path='in memory'" in repr(memory) and "governance='off'" in repr(memory)


def test_a_server_store_shows_its_url_with_the_password_masked(pg_schema):
    """A URL may carry a password; the display shows the server's location without it."""
    host = pg_schema.url.split("://", 1)[1]
    secret_url = f"postgresql://{getpass.getuser()}:s3cret-pw@{host}"
    try:
        memory = MemoryManager(store_path=secret_url)
    except Exception as exc:  # a server that checks passwords refuses the made-up one: nothing to show
        pytest.skip(f"the test server refuses a password in the URL ({exc.__class__.__name__})")
    with memory:
        shown = repr(memory) + memory._repr_html_()
        assert "backend='postgres'" in shown and "search_path" in shown
        assert "s3cret-pw" not in shown and "in memory" not in shown


def test_the_manager_names_a_few_users_and_counts_the_rest(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        for i in range(25):
            memory.add(Message("user", "hello world again", user_id=f"u{i}"))
        assert "users=[u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, … and 15 more]" in repr(memory)


def test_a_long_path_is_cut_at_its_start_so_the_file_name_shows(tmp_path):
    deep = tmp_path.joinpath(*["folder"] * 20)
    deep.mkdir(parents=True)
    with MemoryManager(store_path=deep / "agent.json") as memory:
        text = repr(memory)
        assert re.search(r"path='…[folder/]{20,60}/agent\.json'", text) and len(text) < 220, text
        assert f"<bdi>{html.escape(str(deep / 'agent.json'))}</bdi>" in memory._repr_html_()  # HTML: all of it


def test_looking_at_a_manager_reads_nothing_into_the_logs(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "m.json", clock=clock) as memory:
        memory.add(Message("user", "记住我喜欢绿茶", user_id="ann"))
        memory.build_context("绿茶", user_id="ann")
        memory.audit.reads()  # the read's event is written (it waits for the next write or a look at the log)
        logs = [tmp_path / name for name in ("m.json", "m.reads.jsonl", "m.writes.jsonl")]  # store, both logs
        before = ([f.read_bytes() for f in logs], len(memory.audit.reads()), len(memory.audit.writes()))
        repr(memory), memory._repr_html_()
        assert ([f.read_bytes() for f in logs], len(memory.audit.reads()), len(memory.audit.writes())) == before
        assert before[1] == 1


def test_a_closed_manager_says_closed_and_why_instead_of_raising(tmp_path):
    memory = MemoryManager(store_path=tmp_path / "m.json")
    memory.close()
    assert repr(memory).startswith("MemoryManager(closed='it was closed', backend='json'")
    assert "users=" not in repr(memory) and "closed" in memory._repr_html_()
    earlier = MemoryManager(store_path=tmp_path / "n.json")
    later = MemoryManager(store_path=tmp_path / "n.json")  # a notebook cell run twice
    assert "the same store was opened again" in repr(earlier) and "closed=" not in repr(later)
    with pytest.raises(StoreClosedError):
        earlier.users()
    later.close()


# -- the example notebook, executed ---------------------------------------------------------------

SECRET = "下周三去面试"  # bob's private note in the notebook; erased in the cell tagged "erase"


def _nbclient():
    try:
        import nbclient
        import nbformat
    except ImportError as exc:
        message = f"nbclient/nbformat not installed ({exc}): pip install -e \".[test]\""
        if os.environ.get("V2_MEMORY_REQUIRE_NOTEBOOK") == "1":
            pytest.fail(message + " and V2_MEMORY_REQUIRE_NOTEBOOK=1")
        pytest.skip(message)
    return nbclient, nbformat


def _files(root: Path) -> set[Path]:
    """Files under ``root``, less caches and the packaging metadata other tests build."""
    skip = {".git", "__pycache__", ".pytest_cache", ".hypothesis", "build"}
    return {p for p in root.rglob("*")
            if not any(part in skip or part.endswith(".egg-info") for part in p.relative_to(root).parts)}


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook run top to bottom in a fresh python3 kernel, from the repo root, importing
    this checkout's v2_memory (PYTHONPATH first: an installed copy elsewhere must not answer)."""
    nbclient, nbformat = _nbclient()
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import v2_memory; print(v2_memory.__file__)"))
    scratch = tmp_path_factory.mktemp("kernel")
    (scratch / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "TMPDIR": str(scratch / "tmp"), "IPYTHONDIR": str(scratch / "ipython"), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    before = _files(REPO)
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=180,
                                     resources={"metadata": {"path": str(REPO)}})
    client.execute(env=env)
    return {"cells": notebook.cells, "scratch": scratch / "tmp", "new_in_repo": _files(REPO) - before}


def _outputs(cell) -> list[dict]:
    return [o for o in cell.get("outputs", [])]


def _shown(cell, kind: str) -> str:
    """Everything a cell showed in ``kind`` (``text/html``, ``text/plain``, or ``stream``)."""
    if kind == "stream":  # one print may arrive in several chunks: they carry their own newlines
        return "".join(output["text"] for output in _outputs(cell) if output["output_type"] == "stream")
    return "\n".join(output["data"].get(kind, "") for output in _outputs(cell)
                     if output["output_type"] in ("display_data", "execute_result"))


def _tagged(cells, tag: str) -> int:
    return next(i for i, cell in enumerate(cells) if tag in cell.get("metadata", {}).get("tags", []))


def test_the_notebook_runs_without_an_error_and_imports_this_checkout(executed):
    cells = executed["cells"]
    errors = [o for c in cells for o in _outputs(c) if o["output_type"] == "error"]
    assert errors == []
    assert Path(_shown(cells[-1], "stream").strip()).resolve() == REPO / "v2_memory" / "__init__.py"
    assert all(c.get("execution_count") for c in cells if c.cell_type == "code")


def test_the_notebook_shows_an_explanation_as_an_escaped_html_table(executed):
    cells = executed["cells"]
    explained = _shown(cells[_tagged(cells, "explain")], "text/html")
    assert "<caption><b><bdi>Explanation</bdi></b></caption>" in explained
    assert "unverified_model_output" in explained and "<bdi>1.0</bdi>" in explained
    markup = _shown(cells[_tagged(cells, "markup")], "text/html")
    assert "&lt;b&gt;&quot;周报&quot;&lt;/b&gt; &amp; &lt;script&gt;" in markup and "<script" not in markup
    assert read_html(markup).tags <= TAGS


def test_every_value_the_notebook_shows_has_a_table_and_readable_numbers(executed):
    cells = executed["cells"]
    every_html = "\n".join(_shown(c, "text/html") for c in cells)
    for name in ["MemoryManager", "WriteResult", "Admission", "Explanation", "EraseReceipt", "HealthReport"]:
        assert f"<caption><b><bdi>{name}</bdi></b></caption>" in every_html, name
    every_text = "\n".join(_shown(c, kind) for c in cells for kind in ("text/html", "text/plain"))
    assert not re.search(r"\d\.\d{7,}", every_text), "a float shown unrounded"
    assert "0x7f" not in every_text and " object at " not in every_text


def test_an_erased_secret_appears_in_no_output_after_the_erasure(executed):
    """Before the erasure bob's own read shows his note (so the check below can fail); from the
    erasure on, no output of any kind holds it, and no file the store wrote does."""
    cells = executed["cells"]
    erase = _tagged(cells, "erase")
    before = [_shown(c, kind) for c in cells[:erase] for kind in ("text/html", "text/plain", "stream")]
    after = [_shown(c, kind) for c in cells[erase:] for kind in ("text/html", "text/plain", "stream")]
    assert any(SECRET in text for text in before)
    assert not any(SECRET in text for text in after)
    alice_context = _shown(cells[_tagged(cells, "before-erase")], "stream")
    assert alice_context and SECRET not in alice_context
    assert "files holding the note: []" in _shown(cells[_tagged(cells, "after-erase")], "stream")
    assert "<bdi>[alice]</bdi>" in _shown(cells[_tagged(cells, "after-erase")], "text/html")


def test_the_notebook_writes_only_into_its_temporary_folder_and_removes_it(executed):
    cells = executed["cells"]
    opened = _shown(cells[_tagged(cells, "open")], "text/html")
    assert f"<bdi>{executed['scratch']}{os.sep}v2_memory_quickstart_" in opened  # the store lived in the kernel's temp folder
    assert list(executed["scratch"].iterdir()) == []  # and the notebook removed it
    assert executed["new_in_repo"] == set()
    assert "closed='it was closed'" in _shown(cells[_tagged(cells, "close")], "text/plain")


def test_the_notebook_is_committed_without_outputs():
    """Outputs in git go stale (and would carry whatever memory text a run showed): CI makes them."""
    _, nbformat = _nbclient()
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    assert sys.version_info >= (3, 10)


def test_the_readme_points_to_the_notebook_and_maps_the_display_module():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it in a notebook or an agent")[1].split("\n## ")[0]
    assert "examples/quickstart.ipynb" in section and NOTEBOOK.exists()
    for name in ["MemoryManager", "WriteResult", "Explanation", "Admission", "EraseReceipt", "HealthReport"]:
        assert f"`{name}`" in section, name
    assert "`weight=0.857`" in section  # what test_numbers_are_rounded_for_display... checks
    modules = (REPO / "docs" / "modules.md").read_text(encoding="utf-8")
    assert "`display.py`" in modules


@pytest.mark.parametrize("required", ["1", ""])
def test_without_nbclient_the_notebook_test_skips_unless_required(monkeypatch, required):
    """CI sets V2_MEMORY_REQUIRE_NOTEBOOK=1: there a missing nbclient fails the run, not skips it."""
    monkeypatch.setitem(sys.modules, "nbclient", None)  # ``import nbclient`` now raises ImportError
    monkeypatch.setenv("V2_MEMORY_REQUIRE_NOTEBOOK", required)
    outcome = pytest.fail.Exception if required == "1" else pytest.skip.Exception
    with pytest.raises(outcome, match="nbclient"):
        _nbclient()
