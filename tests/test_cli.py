"""The command line, as a user runs it: on the demo's store, in-process and as a subprocess."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from v2_memory.cli import build_parser, main
from v2_memory.main import run_demo

REPO = Path(__file__).resolve().parent.parent


def run_json(capsys, *argv: str):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_every_command_has_help_with_an_example():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(commands) >= {"demo", "bench", "inspect", "health", "diff", "erase-user"}
    for name, sub in commands.items():
        assert "example:" in sub.format_help(), name
    assert "cannot be undone" in commands["erase-user"].format_help()


def test_health_reports_every_metric_with_its_rule(demo_store, capsys):
    report = run_json(capsys, "health", "--store", str(demo_store), "--json")
    names = [m["name"] for m in report["metrics"]]
    assert names == ["pollution_rate", "decay_efficiency", "cross_domain_leakage", "unverified_low_confidence",
                     "negated_stored_positive", "persona_writes_per_user_hour", "high_weight_share",
                     "ended_sessions_holding_state", "model_output_as_user_input"]
    assert all(m["rule"] and m["status"] in ("ok", "warn", "bad", "n/a") for m in report["metrics"])
    assert main(["health", "--store", str(demo_store)]) == 0
    assert "pollution_rate" in capsys.readouterr().out


def test_inspect_shows_the_turn_where_the_wrong_answer_came_back(demo_store, capsys):
    turns = run_json(capsys, "inspect", "--store", str(demo_store), "--session-id", "s-polluted", "--json")
    last_read = [t for t in turns if t["read"]][-1]["read"]
    admitted = [c["content"] for c in last_read["candidates"] if c["admitted"]]
    assert "ReLU 是循环神经元，用于记忆序列。" in admitted
    assert any("ReLU 是循环神经元" in line for t in turns for line in t["context_diff"]["added"])
    assert main(["inspect", "--store", str(demo_store), "--session-id", "s-polluted", "--window", "2"]) == 0
    assert "== turn" in capsys.readouterr().out


def test_diff_points_at_the_polluting_write(demo_store, capsys):
    result = run_json(capsys, "diff", "--store", str(demo_store), "--session-id", "s-clean", "--session-id", "s-polluted", "--json")
    first = result["first_difference"]
    assert first.startswith("write #2") and "'llm_response' vs 'user_input'" in first and "ReLU 是循环神经元" in first
    assert main(["diff", "--store", str(demo_store), "--session-id", "s-clean", "--session-id", "s-polluted"]) == 0
    assert "first difference: write #2" in capsys.readouterr().out


def test_erase_user_needs_yes_and_then_leaves_nothing(tmp_path, capsys):
    run_demo(out_dir=tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main(["erase-user", "--store", str(tmp_path), "learner-b"]) == 2
    assert "cannot be undone" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    receipt = run_json(capsys, "erase-user", "--store", str(tmp_path), "learner-b", "--yes", "--json")
    assert receipt["removed"]["store"] == 8 and receipt["removed"]["logs"] > 0
    for path in tmp_path.glob("memory_store*"):
        assert "循环神经元".encode("utf-8") not in path.read_bytes(), path


def test_commands_run_as_subprocesses_and_fail_in_one_line(demo_store, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "v2_memory", "health", "--store", str(demo_store)],
                        cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert ok.returncode == 0 and "overall:" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "v2_memory", "inspect", "--store", str(tmp_path), "--session-id", "x"],
                         cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert bad.returncode == 1 and bad.stderr.startswith("error: ") and len(bad.stderr.strip().splitlines()) == 1


def test_inspecting_never_writes(demo_store, capsys):
    before = {p.name: p.read_bytes() for p in demo_store.iterdir() if p.is_file()}
    main(["health", "--store", str(demo_store), "--json"])
    main(["inspect", "--store", str(demo_store), "--session-id", "s-clean", "--json"])
    capsys.readouterr()
    assert {p.name: p.read_bytes() for p in demo_store.iterdir() if p.is_file()} == before


def test_the_readme_quotes_what_diff_prints(demo_store, capsys):
    main(["diff", "--store", str(demo_store), "--session-id", "s-clean", "--session-id", "s-polluted"])
    printed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("first difference:"))
    inspector = (REPO / "docs" / "inspector.md").read_text(encoding="utf-8")
    assert printed in inspector.splitlines()
    assert "memory(0.314×1.00): assistant: ReLU" in inspector


def test_health_sees_the_polluted_integration(demo_store, capsys):
    """pollution_rate counts writes labelled llm_response; the demo's polluted session labels the
    model's replies user_input, which only this metric sees: 4 replies."""
    report = run_json(capsys, "health", "--store", str(demo_store), "--json")
    metric = next(m for m in report["metrics"] if m["name"] == "model_output_as_user_input")
    assert (metric["value"], metric["status"]) == (4, "bad")


def test_inspect_asks_whose_session_when_it_is_shared(tmp_path, capsys):
    from v2_memory import MemoryManager, Message

    with MemoryManager(store_path=tmp_path / "memory_store.json") as memory:
        memory.add(Message("user", "alice 的工资条", "alice", session_id="s1"))
        memory.add(Message("user", "bob 的报销单", "bob", tenant_id="t2", session_id="s1"))
    assert main(["inspect", "--store", str(tmp_path), "--session-id", "s1"]) == 1
    assert "several users" in capsys.readouterr().err
    turns = run_json(capsys, "inspect", "--store", str(tmp_path), "--session-id", "s1", "--user-id", "alice", "--json")
    assert [w["content"] for t in turns for w in t["writes"]] == ["alice 的工资条"]
    with pytest.raises(SystemExit):  # argparse refuses --window 0 (it used to show every turn)
        main(["inspect", "--store", str(tmp_path), "--session-id", "s1", "--window", "0"])


def test_erase_user_refuses_an_unknown_user_and_writes_nothing(tmp_path, capsys):
    run_demo(out_dir=tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main(["erase-user", "--store", str(tmp_path), "nobody", "--yes"]) == 3  # nothing found
    assert "nothing was erased" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


# ---- One style, one error format, quiet pipes, JSON everywhere ----
def _subcommands(parser=None):
    """Every runnable command's parser, by its full name: "demo", "eval pollution", ..."""
    parser = parser or build_parser()
    action = next(a for a in parser._actions if a.dest in ("command", "evaluation", "kind") and a.choices)
    found = {}
    for name, sub in action.choices.items():
        nested = [a for a in sub._actions if getattr(a, "choices", None) and isinstance(a.choices, dict)]
        if nested:
            found.update({f"{name} {inner}": p for inner, p in nested[0].choices.items()})
        else:
            found[name] = sub
    return action, found


def test_help_texts_share_one_style():
    """A sentence saying what the command does (the same in the command list), options in lower case
    without a full stop, and an example as the last line that is never wrapped mid-command."""
    action, commands = _subcommands()
    listed = {choice.dest: choice.help for choice in action._choices_actions}
    assert set(commands) >= {"demo", "bench", "eval pollution", "eval locomo", "inspect", "health", "diff", "erase-user"}
    for name, sub in commands.items():
        description = sub.description
        assert description[0].isupper() and description.endswith("."), name
        if name in listed:
            assert listed[name] == description, name
        lines = [line for line in sub.format_help().splitlines() if line.strip()]
        assert lines[-1].startswith("example: python"), (name, lines[-1])
        for option in sub._actions:
            if option.help and option.dest != "help":
                assert not option.help[0].isupper() and not option.help.endswith("."), (name, option.help)


def test_every_command_that_prints_results_takes_json():
    _, commands = _subcommands()
    for name, sub in commands.items():
        if sub.get_default("stdout_protocol"):  # its stdout is a protocol stream (mcp): JSON already, no tables
            continue
        assert "--json" in {flag for a in sub._actions for flag in a.option_strings}, name


def test_demo_json_prints_the_trace(tmp_path, capsys):
    trace = run_json(capsys, "demo", "--out", str(tmp_path), "--json")
    assert trace == json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))


def test_diff_with_an_unknown_session_fails_like_inspect(demo_store, capsys):
    """Both name the session and list the ones the logs know, with their users; neither prints a table."""
    assert main(["inspect", "--store", str(demo_store), "--session-id", "s-nope"]) == 1
    inspect_error = capsys.readouterr()
    for pair in (["s-clean", "s-nope"], ["s-nope", "s-polluted"]):
        assert main(["diff", "--store", str(demo_store), "--session-id", pair[0], "--session-id", pair[1]]) == 1
        diff_error = capsys.readouterr()
        assert diff_error.out == "" and diff_error.err == inspect_error.err
    assert inspect_error.err == ("error: no session 's-nope' in the logs; sessions there: "
                                 "s-clean (learner-a), s-polluted (learner-b)\n")


@pytest.mark.parametrize(("store", "says"), [
    ("missing", "folder {tmp}/missing does not exist"),
    ("missing/deeper/memory_store.json", "folder {tmp}/missing does not exist"),
    ("missing.json", "file {tmp}/missing.json does not exist"),
    ("empty", "folder {tmp}/empty holds no memory_store.json"),
])
def test_a_missing_store_says_whether_the_folder_or_the_file_is_missing(tmp_path, capsys, store, says):
    (tmp_path / "empty").mkdir()
    for command in (["health"], ["inspect", "--session-id", "s"], ["diff", "--session-id", "a", "--session-id", "b"],
                    ["erase-user", "u", "--yes"]):
        assert main([command[0], "--store", str(tmp_path / store), *command[1:]]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: " + says.format(tmp=tmp_path)) and "[Errno" not in err, (command, err)


def test_file_system_errors_are_words_never_errno_codes(tmp_path):
    """Whatever raised it, an OSError prints what happened to which folder or file."""
    from v2_memory.cli.guard import error_text
    from v2_memory.errors import StoreError

    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    folder, file = tmp_path, tmp_path / "a-file"
    cases = {
        FileNotFoundError(2, "No such file or directory", str(tmp_path / "gone" / "x.json")): f"folder {tmp_path}/gone does not exist",
        FileNotFoundError(2, "No such file or directory", str(tmp_path / "x.json")): f"file {tmp_path}/x.json does not exist",
        NotADirectoryError(20, "Not a directory", str(file / "sub")): f"{file} is a file, not a folder",
        IsADirectoryError(21, "Is a directory", str(folder)): f"{folder} is a folder, not a file",
        FileExistsError(17, "File exists", str(file)): f"file {file} already exists",
        PermissionError(13, "Permission denied", str(folder)): f"folder {folder}: permission denied",
        OSError(28, "No space left on device"): "No space left on device",
        StoreError("cannot read ([Errno 5] Input/output error)", path=file): f"{file}: cannot read (Input/output error)",
    }
    for exc, expected in cases.items():
        assert error_text(exc) == expected


@pytest.mark.parametrize("argv", [
    ["-m", "v2_memory", "demo", "--out", "{tmp}"],
    ["v2_memory/main.py", "--out", "{tmp}"],
    ["-m", "v2_memory", "health", "--store", "{store}"],
    ["-m", "v2_memory", "inspect", "--store", "{store}", "--session-id", "s-polluted", "--json"],
])
def test_a_reader_that_leaves_early_ends_the_command_quietly(demo_store, tmp_path, argv):
    """``v2-memory ... | head``: the pipe closes before the command writes; no traceback, no error line."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    try:
        done = subprocess.run([sys.executable, *[a.format(tmp=tmp_path, store=demo_store) for a in argv]],
                              cwd=REPO, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode == 141


HIDDEN = "\x1b[2J\x1b[31m\u202eevil\u2066\x07\r\x9b"  # clear screen, red, bidi override and isolate, bell, CR, CSI


def _hidden_characters(text: str) -> list[str]:
    import unicodedata

    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def test_commands_print_memory_text_and_ids_escaped(tmp_path, capsys):
    """Memory holds what anybody typed, escape sequences included: the terminal must show them, not obey them."""
    from v2_memory import MemoryManager, Message

    session = "s" + HIDDEN
    with MemoryManager(store_path=tmp_path / "memory_store.json") as memory:
        for who in ("alice", "bob"):
            memory.add(Message("user", f"{who} note {HIDDEN} 记忆污染", who, session_id=session if who == "alice" else "s2"))
            memory.build_context(f"note {HIDDEN} 记忆污染", who, session_id=session if who == "alice" else "s2")
            memory.add(Message("assistant", f"reply {HIDDEN}", who, session_id=session if who == "alice" else "s2"))
    runs = [["inspect", "--session-id", session], ["diff", "--session-id", session, "--session-id", "s2"], ["health"],
            ["inspect", "--session-id", "unknown" + HIDDEN]]
    for argv in runs:
        main([argv[0], "--store", str(tmp_path), *argv[1:]])
        printed = capsys.readouterr()
        assert not _hidden_characters(printed.out + printed.err), argv
    main(["inspect", "--store", str(tmp_path), "--session-id", session])
    out = capsys.readouterr().out
    assert "\\x1b[2J\\x1b[31m\\u202eevil\\u2066\\x07" in out and "记忆污染" in out


@pytest.mark.parametrize("backend", ["sqlite", "sqlite-url", "postgres"])
def test_every_command_works_on_a_sqlite_file_and_a_server(demo_store, tmp_path, capsys, request, backend):
    """The operator's commands read any backend: the demo's store, migrated, answers the same."""
    if backend == "postgres":
        target = request.getfixturevalue("pg_schema").url
    else:
        target = str(tmp_path / "memory.sqlite3")
    run_json(capsys, "migrate", str(demo_store / "memory_store.json"), target, "--json")
    store = f"sqlite:///{target}" if backend == "sqlite-url" else target
    for argv in (["inspect", "--session-id", "s-polluted"], ["diff", "--session-id", "s-clean", "--session-id", "s-polluted"],
                 ["users"], ["recall", "default", "记忆污染 阈值 Agent"]):
        assert run_json(capsys, *argv, "--store", store, "--json") == run_json(capsys, *argv, "--store", str(demo_store), "--json")
    health = run_json(capsys, "health", "--store", store, "--json")
    assert [(m["name"], m["status"]) for m in health["metrics"]] == [
        (m["name"], m["status"]) for m in run_json(capsys, "health", "--store", str(demo_store), "--json")["metrics"]]
    assert main(["erase-user", "--store", store, "nobody", "--yes"]) == 3
    assert "no memory of user 'nobody'" in capsys.readouterr().err
    receipt = run_json(capsys, "erase-user", "--store", store, "learner-b", "--yes", "--json")
    assert receipt["removed"]["store"] == 8 and receipt["removed"]["logs"] > 0
    from v2_memory.observe.inspector import open_store_dir

    with open_store_dir(store) as opened:
        assert opened.store.records("learner-b") == [] and opened.store.records("learner-a")
        assert not [e for e in opened.audit.writes() + opened.audit.reads() if e.user_id == "learner-b"]
    if backend != "postgres":
        assert "循环神经元".encode("utf-8") not in Path(target).read_bytes()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_empty_database_is_no_store_and_stays_empty(tmp_path, capsys, request, backend):
    if backend == "postgres":
        schema = request.getfixturevalue("pg_schema")
        target = schema.url
    else:
        target = str(tmp_path / "empty.sqlite3")
        Path(target).write_bytes(b"")
    assert main(["health", "--store", target]) == 1
    assert "no v2_memory store here" in capsys.readouterr().err
    if backend == "postgres":
        assert schema.dump() == b""  # no table was created
    else:
        assert [p.name for p in tmp_path.iterdir()] == ["empty.sqlite3"] and Path(target).read_bytes() == b""


@pytest.mark.parametrize("name", ["memory_store.json", "memory.sqlite3"])
def test_erase_user_finds_a_user_whose_only_traces_are_tracks_after_the_log_was_trimmed(tmp_path, capsys, name):
    """A user who only said "ok" has no record, only a window and a session; once the logs kept
    only newer events, erase-user called that user unknown and left their window on disk."""
    from v2_memory import MemoryManager, Message

    path = tmp_path / name
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "嗯嗯好的", "ann", session_id="s1"))
        assert memory.store.records("ann") == []  # filler: the window holds it, long-term memory does not
        for _ in range(3):  # the logs forget ann's event
            memory.audit.remove(lambda event: event.user_id == "ann")
        assert not any(e.user_id == "ann" for e in memory.audit.writes() + memory.audit.reads())
    assert main(["erase-user", "--store", str(path), "ann", "--yes"]) == 0
    assert "嗯嗯好的".encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert main(["erase-user", "--store", str(path), "ann", "--yes"]) == 3  # now nothing is left of ann
