"""The read-only commands that show what an agent remembers — users, recall, export — and --version."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from v2_memory import MemoryManager, Message, __version__
from v2_memory.cli import main

REPO = Path(__file__).resolve().parent.parent


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_version_on_both_entry_points(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"v2-memory {__version__}"
    run = subprocess.run([sys.executable, "-m", "v2_memory", "--version"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == f"v2-memory {__version__}"


def test_the_package_says_it_is_typed():
    assert (REPO / "v2_memory" / "py.typed").is_file()
    assert '"py.typed"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_users_lists_each_user_with_their_records(demo_store, capsys):
    assert main(["users", "--store", str(demo_store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"user_id": "default", "records": 11}, {"user_id": "learner-a", "records": 8}, {"user_id": "learner-b", "records": 8}]
    assert main(["users", "--store", str(demo_store), "--tenant-id", "acme"]) == 3  # nothing found, not an error
    assert "no users" in capsys.readouterr().err


def test_recall_shows_the_verdicts_and_changes_nothing(demo_store, capsys):
    before = _files(demo_store)
    assert main(["recall", "--store", str(demo_store), "default", "记忆污染 阈值 Agent", "--json"]) == 0
    verdicts = {a["record_id"]: (a["admitted"], a["reasons"]) for a in json.loads(capsys.readouterr().out)["admissions"]}
    assert verdicts[3] == (True, []) and verdicts[4] == (False, ["unverified_model_output"])
    assert main(["recall", "--store", str(demo_store), "default", "记忆污染 阈值 Agent"]) == 0
    table = capsys.readouterr().out
    assert "admitted" in table and "unverified_model_output" in table
    assert main(["recall", "--store", str(demo_store), "default", "bananas and kiwis"]) == 3
    assert main(["recall", "--store", str(demo_store), "guest", "记忆污染"]) == 3  # the guest was erased by the demo
    assert _files(demo_store) == before  # no read logged, no weight reinforced, no lock file left


def test_export_is_the_users_data_with_a_receipt_that_checks(demo_store, tmp_path, capsys):
    before = _files(demo_store)
    assert main(["export", "--store", str(demo_store), "learner-b"]) == 0
    lines = capsys.readouterr().out.splitlines()
    items = [json.loads(line) for line in lines]
    assert items[0]["type"] == "export" and items[0]["user_id"] == "learner-b" and items[0]["version"] == 1
    records = [i for i in items if i["type"] == "record"]
    assert len(records) == 8 and all(r["user_id"] == "learner-b" for r in records)
    polluted = next(r for r in records if "循环神经元" in r["content"])
    assert polluted["governance"]["verified"] is True  # the buggy integration's write, as governance holds it
    receipt = items[-1]
    body = "".join(line + "\n" for line in lines[:-1]).encode("utf-8")
    assert receipt == {"type": "receipt", "records": 8, "facts": 0, "sha256": hashlib.sha256(body).hexdigest()}
    assert "learner-a" not in "\n".join(lines)
    out = tmp_path / "b.jsonl"
    assert main(["export", "--store", str(demo_store), "learner-b", "--out", str(out), "--json"]) == 0
    written = out.read_text(encoding="utf-8").splitlines()
    digest = hashlib.sha256("".join(line + "\n" for line in written[:-1]).encode("utf-8")).hexdigest()
    assert json.loads(capsys.readouterr().out) == json.loads(written[-1]) == {**receipt, "sha256": digest}
    assert main(["export", "--store", str(demo_store), "learner-b", "--out", str(out)]) == 1  # never overwrites
    assert "already exists" in capsys.readouterr().err
    assert main(["export", "--store", str(demo_store), "nobody"]) == 3
    assert _files(demo_store) == before


def test_export_carries_facts_and_an_isolated_record_raw_to_its_owner(tmp_path, capsys):
    from v2_memory import GovernancePolicy

    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path, governance=GovernancePolicy(sensitive_policy="isolate")) as memory:
        memory.add(Message("user", "我是素食主义者", "ann"))
        memory.confirm_fact("ann", "diet")
        memory.add(Message("user", "my phone is 13912345678", "ann"))
        memory.add(Message("user", "bob's note", "bob"))
    assert main(["export", "--store", str(path), "ann"]) == 0
    items = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert ("diet", "confirmed") in [(i["key"], i["status"]) for i in items if i["type"] == "fact"]
    assert any("13912345678" in i.get("content", "") for i in items)  # the owner's own data, as kept
    assert not any("bob" in json.dumps(i) for i in items)


def test_an_export_file_is_private_ascii_and_its_bytes_match_the_receipt(demo_store, tmp_path, capsys):
    out = tmp_path / "default.jsonl"
    assert main(["export", "--store", str(demo_store), "default", "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data.isascii() and b"\r" not in data and (out.stat().st_mode & 0o777) == 0o600
    body, last = data.rsplit(b"\n", 2)[0] + b"\n", data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    assert json.loads(last)["sha256"] == hashlib.sha256(body).hexdigest()
    assert any("记忆污染" in json.loads(line).get("content", "") for line in data.splitlines())


def test_export_to_a_console_that_cannot_encode_chinese_still_works(demo_store):
    run = subprocess.run([sys.executable, "-m", "v2_memory", "export", "--store", str(demo_store), "default"], cwd=REPO,
                         capture_output=True, env={**__import__("os").environ, "PYTHONIOENCODING": "cp1252"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.isascii() and json.loads(run.stdout.splitlines()[-1])["type"] == "receipt"
