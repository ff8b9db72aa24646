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


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    run_demo(out_dir=out)
    return out


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
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert printed in readme.splitlines()
    assert "memory(0.314×1.00): assistant: ReLU" in readme


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
    assert main(["erase-user", "--store", str(tmp_path), "nobody", "--yes"]) == 1
    assert "nothing was erased" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
