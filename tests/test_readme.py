"""The README and the manual are tests: their examples run, the demo output and tables they
quote are real, every command is documented, and the README stays a quick start."""
from __future__ import annotations

import contextlib
import io
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from v2_memory.cli import build_parser
from v2_memory.main import print_report, run_demo

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = sorted((REPO / "docs").glob("*.md"))
MANUAL = README + "".join(page.read_text(encoding="utf-8") for page in DOCS)  # everything a user reads


@pytest.mark.parametrize("page", ["README.md", *[f"docs/{p.name}" for p in DOCS]])
def test_python_examples_run_and_print_what_their_comments_say(tmp_path, monkeypatch, page):
    """Each standalone ``# ...`` line in an example is a line the example prints."""
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (REPO / page).read_text(encoding="utf-8"), re.S)
    if page == "README.md":
        assert len(blocks) >= 2
    for block in map(textwrap.dedent, blocks):  # an example inside a list item is indented
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, page, "exec"), {})
        printed = out.getvalue().splitlines()
        expected = [line.strip()[2:] for line in block.splitlines() if line.strip().startswith("# ")]  # any indentation
        assert expected and all(line in printed for line in expected), (expected, printed)


def test_demo_output_in_the_readme_is_what_the_demo_prints(tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_report(run_demo(out_dir=tmp_path), tmp_path)
    shown = re.search(r"```\n(blind top-8.*?)```", README, re.S).group(1)
    assert shown in out.getvalue()


def test_ci_runs_the_readmes_install_and_test_lines_in_a_fresh_virtualenv():
    """Stage 1 of .ci/run reads its two commands out of the README (so they cannot drift apart)
    and runs them in a new virtualenv; stage 2 runs everything with --full, on two workers."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    picks = [line for line in ci.splitlines() if line.startswith(("INSTALL=", "TEST="))]
    extracted = subprocess.run(["bash", "-c", "\n".join(picks + ['printf "%s\\n%s" "$INSTALL" "$TEST"'])],
                               cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert extracted.splitlines() == ['pip install -e ".[test]"', "python -m pytest"]
    assert "python3 -m venv" in ci and 'eval "$INSTALL"' in ci and 'eval "$TEST"' in ci
    assert "python -m pytest --full -n 2" in ci.splitlines()  # every test, on two workers


def test_the_readme_is_a_quick_start_and_links_every_page_of_the_manual():
    assert len(README.splitlines()) <= 400
    for page in DOCS:
        assert f"docs/{page.name}" in README or page.name == "index.md", page.name
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert {page.name for page in DOCS} == set(re.findall(r":\s*([\w-]+\.md)", nav))


def test_every_cli_command_is_documented():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name in commands:
        assert f"python -m v2_memory {name}" in MANUAL or f"v2-memory {name}" in MANUAL, name


def _code_blocks() -> list[str]:
    """The manual's fenced blocks without a language tag (program output), in order."""
    blocks, current, tag = [], None, None
    for line in MANUAL.splitlines():
        if line.startswith("```"):
            if current is None:
                current, tag = [], line[3:]
            else:
                if not tag:
                    blocks.append("\n".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


@pytest.mark.slow  # runs both scenario sets
def test_the_pollution_tables_in_the_readme_are_current(capsys):
    from v2_memory.cli import main as cli

    assert cli(["eval", "pollution"]) == 0
    printed = capsys.readouterr().out
    block = next(b for b in _code_blocks() if b.startswith("strategy (all queries)"))
    for chunk in block.strip().split("\n\n"):
        assert chunk in printed, chunk[:60]


LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo dev file is not next to the repository")
def test_the_locomo_tables_in_the_readme_are_current(capsys):
    from v2_memory.cli import main as cli

    assert cli(["eval", "locomo", str(LOCOMO), "--compare"]) == 0
    printed = capsys.readouterr().out
    block = next(b for b in _code_blocks() if b.startswith("scorer article"))
    for chunk in block.strip().split("\n\n"):
        assert chunk in printed, chunk[:60]


def _section(title: str) -> str:
    """The README's text under ``## title``, up to the next heading of the same level."""
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 3)
    return README[start:end if end != -1 else len(README)]


def test_the_two_commands_block_installs_the_test_tools_before_pytest():
    block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).splitlines()
    commands = [line.split("#")[0].strip() for line in block]
    assert commands == ["python v2_memory/main.py", 'pip install -e ".[test]"', "python -m pytest"]


def test_the_notebook_and_agent_section_shows_a_real_loop():
    """Close the manager (``with`` or ``close()``), pass session_id on every read (or read through a
    handle made with one), add the user's turn before build_context, and verify / confirm_fact
    inside the loop that talks to the model."""
    section = _section("Use it in a notebook or an agent")
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    assert code.count("with MemoryManager(") == 2 and "memory.close()" in section
    reads = re.findall(r"memory\.(retrieve|build_context|explain)\((.*)\)", code)
    assert len(reads) >= 2 and all("session_id=" in args for _, args in reads), reads
    assert 'alice = memory.for_user("alice", session_id="s1")' in code  # the loop reads through a scoped handle
    assert "before** `build_context`" in section
    lines = code.splitlines()
    loop = next(i for i, line in enumerate(lines) if line.lstrip().startswith("for said in"))
    depth = len(lines[loop]) - len(lines[loop].lstrip())
    body = [line for line in lines[loop + 1:] if line.strip()]
    body = body[:next((i for i, line in enumerate(body) if len(line) - len(line.lstrip()) <= depth), len(body))]
    calls = "\n".join(body)
    for call in ("alice.verify(", "alice.confirm_fact(", "alice.build_context(", "alice.add("):
        assert call in calls, call
    adds_user = next(i for i, line in enumerate(body) if "alice.add(said)" in line)
    assert adds_user < next(i for i, line in enumerate(body) if "alice.build_context(" in line)
