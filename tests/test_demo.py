"""The article's demo: its table to the third decimal, both ways of running it, its trace."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from v2_memory.main import GUEST_NOTE, run_demo

REPO = Path(__file__).resolve().parent.parent
ARTICLE_BLIND = [0.354, 0.277, 0.211, 0.204, 0.204, 0.204, 0.204, 0.083]
ARTICLE_THRESHOLDED = [0.354, 0.277]


def test_the_article_table_reproduces(tmp_path):
    trace = run_demo(out_dir=tmp_path)
    assert [hit["score"] for hit in trace["blind_top_k"]] == ARTICLE_BLIND
    assert [hit["score"] for hit in trace["thresholded"]] == ARTICLE_THRESHOLDED
    assert [hit["record"]["content"] for hit in trace["thresholded"]] == ["如何治理记忆污染？", "请记录第二篇要讨论记忆污染。"]
    # Four of the eight blind hits are the agent echoing itself (what governance will reject).
    assert [hit["record"]["role"] for hit in trace["blind_top_k"]].count("assistant") == 4


def test_trace_keeps_the_article_keys_and_proves_the_erase(tmp_path):
    run_demo(out_dir=tmp_path)
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    for key in ["query", "summary_memory", "recent_messages", "blind_top_k", "thresholded", "guest_records_after_erase"]:
        assert key in trace
    assert trace["query"] == "记忆污染 阈值 Agent"
    assert trace["guest_records_after_erase"] == []
    assert trace["erase_receipt"]["removed"] == {"window": 1, "summary": 0, "store": 1, "ledger": 1, "state": 0, "logs": 1}
    assert not any(v for k, v in trace["erase_verification"].items() if k != "summary_empty")
    assert trace["isolation"] == {"guest_hits_before_erase": 1, "guest_text_in_default_context": False}
    for file in tmp_path.iterdir():  # the guest's note is in no file the demo wrote
        assert GUEST_NOTE.encode("utf-8") not in file.read_bytes(), file
    js = (tmp_path / "trace.js").read_text(encoding="utf-8")
    assert js.startswith("window.V2_MEMORY_TRACE = ") and json.loads(js[len("window.V2_MEMORY_TRACE = ") : -2]) == trace


@pytest.mark.parametrize(
    "cwd, argv",
    [
        (REPO, ["v2_memory/main.py"]),
        (REPO / "v2_memory", ["main.py"]),
        (REPO, ["-m", "v2_memory", "demo"]),
    ],
)
def test_runs_as_the_readme_says(tmp_path, cwd, argv):
    done = subprocess.run(
        [sys.executable, *argv, "--out", str(tmp_path)], cwd=cwd, capture_output=True, text=True, encoding="utf-8", timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "0.354 user: 如何治理记忆污染？" in done.stdout and "0.083 user: 我在写 Agent 专栏" in done.stdout
    assert {"trace.json", "trace.js", "memory_store.json", "visualization.html"} <= {p.name for p in tmp_path.iterdir()}


def test_running_twice_gives_the_same_table(tmp_path):
    first, second = run_demo(out_dir=tmp_path), run_demo(out_dir=tmp_path)
    assert first["blind_top_k"] == second["blind_top_k"]


def test_options_change_the_run(tmp_path):
    trace = run_demo(query="咖啡 天气", threshold=0.1, top_k=3, window_size=2, out_dir=tmp_path)
    assert trace["top_k"] == 3 and len(trace["blind_top_k"]) == 3
    assert trace["thresholded"][0]["record"]["content"].startswith("今天午饭")
    assert len(trace["recent_messages"]) == 2


def test_bad_option_is_one_line_on_stderr(tmp_path):
    done = subprocess.run(
        [sys.executable, "v2_memory/main.py", "--threshold", "nan", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2 and done.stderr.strip() == "error: threshold must be within [0, 1], got nan"


def test_governed_view_rejects_the_four_echoes(tmp_path):
    trace = run_demo(out_dir=tmp_path)
    echoes = [a for a in trace["governed"]["admissions"] if a["role"] == "assistant"]
    assert len(echoes) == 4 and all(a["reasons"][0] == "unverified_model_output" for a in echoes)
    assert all(a["weight"] == 0.01 and not a["admitted"] for a in echoes)
    admitted = [a["content"] for a in trace["governed"]["admissions"] if a["admitted"]]
    assert admitted == ["如何治理记忆污染？", "请记录第二篇要讨论记忆污染。"]
    assert {scene["key"] for scene in trace["scenes"]} == {"correction", "negation", "identifier", "ended_session", "echo"}


def test_the_demo_never_deletes_a_store_it_did_not_write(tmp_path):
    precious = tmp_path / "memory_store.json"
    precious.write_text("MY PRECIOUS DATA", encoding="utf-8")
    done = subprocess.run([sys.executable, "v2_memory/main.py", "--out", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 2 and "was not written by the demo" in done.stderr
    assert precious.read_text(encoding="utf-8") == "MY PRECIOUS DATA"


def test_an_empty_query_is_refused(tmp_path):
    with pytest.raises(ValueError, match="query"):
        run_demo(query="  ", out_dir=tmp_path)


# ---- Arguments, folders, files ----
@pytest.mark.parametrize(("option", "value", "says"), [
    ("top_k", 0, "top_k must be >= 1"),
    ("top_k", -3, "top_k must be >= 1"),
    ("window_size", 0, "window_size must be >= 1"),
    ("threshold", 1.5, "threshold must be within [0, 1]"),
    ("threshold", float("nan"), "threshold must be within [0, 1]"),
    ("query", "", "query"),
    ("query", " \n", "query"),
])
def test_every_argument_is_checked_before_anything_is_written(tmp_path, option, value, says):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=re.escape(says)):
        run_demo(**{option: value}, out_dir=out)
    assert not out.exists()


def test_an_out_folder_that_is_a_file_is_refused_before_anything_is_written(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine", encoding="utf-8")
    for out in (blocker, blocker / "demo"):
        done = subprocess.run([sys.executable, "v2_memory/main.py", "--out", str(out)],
                              cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
        assert done.returncode == 2 and done.stderr == f"error: --out {out}: {blocker} is a file, not a folder\n"
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"] and blocker.read_text(encoding="utf-8") == "mine"


def _copy_package(target: Path) -> Path:
    """The package's source files alone, as an installation holds them (no pyproject.toml beside it)."""
    package = target / "v2_memory"
    shutil.copytree(REPO / "v2_memory", package, ignore=shutil.ignore_patterns(
        "__pycache__", "trace.js*", "memory_store*", ".*"))
    return package


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.parametrize("command", [["-m", "v2_memory", "demo"], ["-m", "v2_memory.main"]])
def test_an_installed_package_writes_into_the_current_folder(tmp_path, command):
    site = tmp_path / "lib" / "python3" / "site-packages"
    package = _copy_package(site)
    installed = _files(package)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, *command], cwd=work, env={**os.environ, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 0, done.stderr
    assert _files(package) == installed  # nothing new in site-packages
    assert {"trace.json", "trace.js", "memory_store.json", "visualization.html"} <= _files(work)
    assert f"open {(work / 'visualization.html').as_uri()}" in done.stdout


def test_a_source_checkout_writes_next_to_main_py(tmp_path):
    """The README's ``python v2_memory/main.py``: the page is opened where it is, beside its data."""
    package = _copy_package(tmp_path / "checkout")
    shutil.copyfile(REPO / "pyproject.toml", tmp_path / "checkout" / "pyproject.toml")
    done = subprocess.run([sys.executable, "v2_memory/main.py"], cwd=tmp_path / "checkout",
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 0, done.stderr
    assert {"trace.json", "trace.js", "memory_store.json"} <= _files(package)


def _ignored(names: list[str]) -> set[str]:
    """Which of ``names`` (paths from the repository root) the repository's .gitignore ignores."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    with tempfile.TemporaryDirectory() as repo:  # a bare repository with only our .gitignore: no global excludes
        subprocess.run([git, "init", "-q", repo], check=True)
        shutil.copyfile(REPO / ".gitignore", Path(repo) / ".gitignore")
        done = subprocess.run([git, "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "--stdin"],
                              cwd=repo, input="\n".join(names), capture_output=True, text=True)
    return set(done.stdout.splitlines())


def test_gitignore_covers_every_file_the_demo_writes(tmp_path):
    """Whatever the demo leaves in its folder — trace, store, ledger, logs, lock, and the rotated logs,
    temporary files and SQLite journals it may leave — is ignored next to main.py and at the
    repository root (where an installed ``v2-memory demo`` writes when run there); the sources are not."""
    run_demo(out_dir=tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert {"memory_store.writes.jsonl", "memory_store.reads.jsonl", ".memory_store.json.lock"} <= set(written)
    variants = [f"{Path(n).stem}.1{Path(n).suffix}" for n in written if n.endswith(".jsonl")]
    variants += [f".{n}.k3j9x.tmp" for n in written if not n.startswith(".")] + [f"{n}-journal" for n in written if n.endswith(".sqlite3")]
    demo_files = [f"{folder}{name}" for folder in ("v2_memory/", "") for name in [*written, *variants]
                  if f"{folder}{name}" != "v2_memory/visualization.html"]
    sources = [p.relative_to(REPO).as_posix() for p in [*REPO.glob("v2_memory/**/*.py"), REPO / "v2_memory" / "visualization.html",
                                                        *REPO.glob("tests/**/*.py"), *REPO.glob("tests/fixtures/*")]
               if "__pycache__" not in p.parts]
    ignored = _ignored(demo_files + sources)
    assert sorted(set(demo_files) - ignored) == []
    assert sorted(set(sources) & ignored) == []


def test_one_memory_shows_one_weight(tmp_path):
    """The context's ``memory(relevance×weight)`` and the governed view's weight agree for every memory.

    Usage reinforces a returned memory's weight (×1.25, up to 1.00) after each read; the demo builds the
    context before retrieve(), so both show the weight the memory had before this query: 1.00.
    """
    import contextlib
    import io

    from v2_memory.main import print_report

    trace = run_demo(out_dir=tmp_path)
    governed = {a["content"]: f"{a['weight']:.2f}" for a in trace["governed"]["admissions"]}
    in_context = re.findall(r"^memory\([\d.]+×([\d.]+)\): \w+: (.*)$", trace["context"], re.M)
    assert len(in_context) == 2
    assert all(governed[content] == weight == "1.00" for weight, content in in_context)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_report(trace, tmp_path)
    report = printed.getvalue()
    shown = re.findall(r"^  [\d.]+ x ([\d.]+) = [\d.]+ \w+: (.*?)  \[", report, re.M)
    assert all(dict((c, w) for w, c in shown)[content] == weight for weight, content in in_context)
    assert "multiplies its weight by 1.25, up to 1.00" in report


def test_a_rerun_starts_from_nothing_the_last_run_left(tmp_path):
    """Rotated logs and SQLite journals of an earlier run go too: a fresh run must not read them back."""
    run_demo(out_dir=tmp_path)
    leftovers = [tmp_path / "memory_store.writes.1.jsonl", tmp_path / "memory_store.governance.sqlite3-journal"]
    for path in leftovers:
        path.write_text("left by an earlier run\n", encoding="utf-8")
    mine = tmp_path / "memory_store.writes.mine.jsonl"  # not a rotation: not the demo's to delete
    mine.write_text("mine\n", encoding="utf-8")
    assert run_demo(out_dir=tmp_path)["blind_top_k"] == run_demo(out_dir=tmp_path / "fresh")["blind_top_k"]
    assert not any(path.exists() for path in leftovers) and mine.exists()
