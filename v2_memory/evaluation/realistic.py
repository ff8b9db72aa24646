"""The realistic chat set: scenarios written as real conversation by someone who had not read the rules.

The pollution benchmark (``pollution.py``) was written together with the governance rules, so it
cannot see what they miss. This second set (``cases/realistic_chat.json``, format
``v2_memory.realistic_scenarios`` version 1) was written independently, before the rules for
issue 8 changed; it is measured, never tuned to. Each scenario is replayed twice, on a temporary
file store — through ``MemoryManager`` with governance, and with ``governance=False`` — and each
query's ``build_context`` is checked: every ``must_include`` substring present, every
``must_exclude`` absent (case-insensitive). Steps:

    {"say": "user"|"assistant", "user", "text", "session"?, "task"?, "domain"?}   a message
    {"do": "end_session"|"start_task"|"finish_task"|"erase_user", "user", "session"/"task"}
    {"do": "wait", "minutes"}     the clock moves
    {"do": "restart"}             the manager is closed and reopened on the same files

Reported per class and language: scenarios passed (all their queries pass), checks passed, and
**worse than no governance** — a query whose governed context fails a check that the ungoverned
context passed. That count must be 0.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..manager import MemoryManager
from ..messages import Message

__all__ = ["CASES", "FORMAT", "HELDOUT", "TUNING", "SEALED", "load_scenarios", "replay_scenario", "run_realistic",
           "format_realistic", "sealed_totals", "target_failed", "TARGET"]

CASES = Path(__file__).with_name("cases") / "realistic_chat.json"
# Issue 19's independent sets, each written by someone who never read the code before the rules
# changed for it, and split at random: the tuning half may be read and tuned on; the sealed half
# is reported by its totals only. ``heldout``: 222 scenarios (2026-12-02); ``heldout2``: 220 more
# (2026-12-03), commissioned when the first sealed half showed what its tuning half did not;
# ``heldout3``: 234 more (2026-12-03), to measure rules written for the first two on unseen words.
HELDOUT = {name: tuple(CASES.with_name(f"{name}_{half}.json") for half in ("tuning", "sealed"))
           for name in ("heldout", "heldout2", "heldout3")}
TUNING, SEALED = HELDOUT["heldout"]
FORMAT = "v2_memory.realistic_scenarios"
TARGET = 0.95  # share of scenarios that must pass under full governance
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
STEP = timedelta(minutes=1)  # each message one minute after the last


def load_scenarios(path: Path | str = CASES) -> list[dict[str, Any]]:
    """The scenarios of a realistic-set file, after checking its format and version."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    if data.get("version") != 1:
        raise ValueError(f"{path}: unsupported version {data.get('version')!r}")
    return list(data["scenarios"])


@dataclass
class _Clock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now


def _scratch() -> str | None:
    """Where the temporary stores go: a RAM-backed folder when the system has one (every write is
    still a real file write, without waiting on a disk's fsync), else the default temp folder."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _open(folder: Path, governed: bool, clock: _Clock) -> MemoryManager:
    return MemoryManager(store_path=folder / "memory.json", clock=clock, governance=governed, audit=False)


def _step(memory: MemoryManager, step: dict[str, Any], clock: _Clock) -> None:
    if "say" in step:
        clock.now += STEP
        domain = step.get("domain")
        memory.add(Message(step["say"], step["text"], step["user"], session_id=step.get("session"),
                           task_id=step.get("task"), domain=domain))
        return
    action, user = step["do"], step.get("user")
    if action == "wait":
        clock.now += timedelta(minutes=float(step["minutes"]))
    elif action == "end_session":
        memory.end_session(user, step["session"])
    elif action == "start_task":
        memory.start_task(user, step["task"])
    elif action == "finish_task":
        memory.finish_task(user, step["task"])
    elif action == "erase_user":
        memory.erase_user(user)
    else:
        raise ValueError(f"unknown step {action!r}")


def replay_scenario(scenario: dict[str, Any], governed: bool) -> list[str]:
    """Each query's context, after replaying the scenario into a fresh manager on temporary files."""
    clock = _Clock()
    with tempfile.TemporaryDirectory(prefix="v2_memory_realistic_", dir=_scratch()) as folder:
        memory = _open(Path(folder), governed, clock)
        try:
            for step in scenario["steps"]:
                if step.get("do") == "restart":
                    memory.close()
                    memory = _open(Path(folder), governed, clock)
                else:
                    _step(memory, step, clock)
            clock.now += STEP
            return [memory.build_context(q["ask"], q["user"], session_id=q.get("session"), task_id=q.get("task"))
                    for q in scenario["queries"]]
        finally:
            memory.close()


def _checks(query: dict[str, Any], context: str) -> list[tuple[str, bool]]:
    """(check, passed) for each label: "+text" must be in the context, "-text" must not."""
    lowered = context.casefold()
    return ([("+" + s, s.casefold() in lowered) for s in query.get("must_include", [])]
            + [("-" + s, s.casefold() not in lowered) for s in query.get("must_exclude", [])])


def run_realistic(scenarios: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Replay every scenario governed and ungoverned; tally passes per class and language."""
    scenarios = load_scenarios() if scenarios is None else scenarios
    groups: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    failures, worse = [], []
    for scenario in scenarios:
        governed, plain = replay_scenario(scenario, True), replay_scenario(scenario, False)
        passed = True
        for index, (query, context, baseline) in enumerate(zip(scenario["queries"], governed, plain)):
            mine, theirs = _checks(query, context), dict(_checks(query, baseline))
            failed = [check for check, ok in mine if not ok]
            passed = passed and not failed
            if failed:
                failures.append({"scenario": scenario["id"], "query": index, "failed": failed})
            worse += [{"scenario": scenario["id"], "query": index, "check": check} for check in failed if theirs.get(check)]
        for group in (f"{scenario['class']} / {scenario['lang']}", f"all / {scenario['lang']}", "all"):
            groups[group]["scenarios"] += 1
            groups[group]["passed"] += passed
    total = groups["all"]
    return {"scenarios": total["scenarios"], "passed": total["passed"],
            "pass_rate": total["passed"] / total["scenarios"] if total["scenarios"] else None,
            "target": TARGET, "worse_than_no_governance": len(worse),
            "groups": {name: dict(counts) for name, counts in sorted(groups.items())},
            "failures": failures, "worse": worse}


def target_failed(report: dict[str, Any]) -> bool:
    """Whether the set misses a target: too few scenarios pass, or governance made a context worse."""
    return (report["pass_rate"] or 0.0) < TARGET or report["worse_than_no_governance"] > 0


def format_realistic(report: dict[str, Any]) -> str:
    """The report as plain text: one line per class and language, then the targets and failures."""
    lines = [f"realistic chat set: {report['scenarios']} scenarios (written independently of the rules)", "",
             f"{'class / language':34}  passed  scenarios  rate"]
    for name, counts in report["groups"].items():
        lines.append(f"{name:34}  {counts['passed']:6}  {counts['scenarios']:9}  {counts['passed'] / counts['scenarios']:5.0%}")
    rate = report["pass_rate"] or 0.0
    lines += ["", f"scenarios passed (full governance): {rate:.1%}  target >= {TARGET:.0%}  "
                  f"{'PASS' if rate >= TARGET else 'FAIL'}",
              f"contexts governance made worse than no governance: {report['worse_than_no_governance']}  target == 0  "
              f"{'PASS' if report['worse_than_no_governance'] == 0 else 'FAIL'}"]
    if report["failures"]:
        lines += ["", "failed checks:"]
        lines += [f"  {f['scenario']} #{f['query']}: {', '.join(f['failed'])}" for f in report["failures"]]
    return "\n".join(lines)


def sealed_totals(report: dict[str, Any]) -> dict[str, Any]:
    """A sealed set's report without its failures: what passed, never which scenario failed how."""
    return {key: report[key] for key in ("scenarios", "passed", "pass_rate", "target", "worse_than_no_governance")}
