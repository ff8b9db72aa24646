"""``python -m v2_memory eval pollution``: the labelled memory-pollution benchmark.

One question, answered with counts: of what each strategy lets into a prompt, how much should be
there, and how much is pollution? Every scenario (``pollution_cases.py``, its stories in
``cases/pollution_*.json``) is a scripted bilingual history; every query is labelled with what its
context should hold and what must not enter, by kind of pollution (``pollution_script.py``). Each
scenario is replayed into fresh in-memory managers, every query is asked of four strategies, and
each context is scored (``pollution_metrics.py``):

    blind top-3 / top-8   ``retrieve_without_threshold`` on an un-governed store: always k memories
    threshold only        ``MemoryManager(governance=False).retrieve``: the article's fix
    full governance       ``explain(...).admitted`` in the query's read scope (what ``build_context``
                          shows from long-term memory) plus the confirmed persona fact lines

The threshold strategies share one threshold (default 0.2, the library's) and admit at most 8
memories, the largest blind k, so that the cap never decides a comparison. Erasure happens in every
store — an un-governed store forgets too — and residue is looked for in every context's text all the
same. The recent window and the summary are left out: this measures what each strategy *recalls*.
Read it in order: replay, contexts, scoring, report, command.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..governance.persona import render_fact
from ..manager import MemoryManager
from ..messages import Hit
from ..tables import clip, format_table
from . import realistic
from .pollution_cases import SCENARIOS
from .pollution_metrics import Item, Labels, Tally, carries, must_not_kind, score_query
from .pollution_script import (
    KINDS,
    START,
    Action,
    Query,
    Scenario,
    Write,
    labels,
    truth_of,
)

__all__ = ["NAME", "DESCRIPTION", "EPILOG", "STRATEGIES", "TARGETS", "DEFAULT_THRESHOLD", "CAP", "replay",
           "contexts", "run_benchmark", "format_report", "scenario_report", "format_scenario", "add_arguments",
           "run_from_args"]

NAME = "pollution"
DESCRIPTION = "The labelled pollution benchmark: blind top-k, threshold only and full governance, per kind."
STRATEGIES = ("blind top-3", "blind top-8", "threshold only", "full governance")
GOVERNED = "full governance"
DEFAULT_THRESHOLD = 0.2
CAP = 8
# Full governance's targets: (name, Tally attribute, comparison, limit, unit).
TARGETS = (("pollution rate", "pollution_rate", "<=", 0.02, "%"), ("recall", "recall", ">=", 0.95, ""),
           ("leaks across users", "leaks", "==", 0, ""), ("erased residue", "residue", "==", 0, ""),
           ("negation flips", "flips", "==", 0, ""))


# -- 1. replay: the script, step by step, into a fresh manager ----------------------------------
@dataclass
class _ScriptClock:
    """The manager's clock: the minute of the step being replayed."""

    now: datetime = START

    def __call__(self) -> datetime:
        return self.now


def replay(scenario: Scenario, governed: bool, threshold: float = DEFAULT_THRESHOLD) -> tuple[MemoryManager, dict[int, str]]:
    """A manager holding the scenario's history at query time, and record id -> write key."""
    clock = _ScriptClock()
    memory = MemoryManager(threshold=threshold, store_path=None, clock=clock, governance=governed, audit=False)
    keys: dict[int, str] = {}
    for step in scenario.steps:
        clock.now = START + timedelta(minutes=step.minute)
        if isinstance(step, Write):
            record_id = memory.add(step.message).record_id
            if record_id is not None:  # filler and code-only text never reach a governed store
                keys[record_id] = step.key
        else:
            _act(memory, step, {key: record_id for record_id, key in keys.items()})
    clock.now = START + timedelta(minutes=scenario.end_minute)
    return memory, keys


def _act(memory: MemoryManager, action: Action, record_ids: dict[str, int]) -> None:
    user, arg, tenant = action.user_id, action.arg or "", action.tenant_id
    calls: dict[str, Callable[[], object]] = {
        "confirm_fact": lambda: memory.confirm_fact(user, arg, tenant_id=tenant),
        "verify": lambda: memory.verify(record_ids[arg], user_id=user, tenant_id=tenant),
        "end_session": lambda: memory.end_session(user, arg, tenant_id=tenant),
        "start_task": lambda: memory.start_task(user, arg, tenant_id=tenant),
        "set_task_progress": lambda: memory.set_task_progress(user, arg, action.amount, tenant_id=tenant),
        "finish_task": lambda: memory.finish_task(user, arg, tenant_id=tenant),
        "erase_user": lambda: memory.erase_user(user, tenant_id=tenant),
        "forget": lambda: memory.forget(user, record_ids[arg], tenant_id=tenant),
    }
    calls[action.call]()


# -- 2. contexts: what each strategy puts into the prompt ---------------------------------------
def _memory_items(hits: list[Hit], keys: dict[int, str]) -> list[Item]:
    return [Item(keys[record["record_id"]], f"{record['role']}: {record['content']}") for _, record in hits]


def _governed_items(memory: MemoryManager, query: Query, keys: dict[int, str]) -> list[Item]:
    """Persona fact lines first (as ``build_context`` puts them), then the admitted memories."""
    explanation = memory.explain(query.text, query.user_id, CAP, **query.read_scope())
    facts = [Item(f"fact:{f['key']}={'NOT ' if f['polarity'] < 0 else ''}{f['value']}",
                  render_fact(f["key"], f["value"], f["polarity"])) for f in explanation.facts]
    return facts + [Item(keys[a.record_id], f"{a.record['role']}: {a.record['content']}") for a in explanation.admitted]


def contexts(scenario: Scenario, threshold: float = DEFAULT_THRESHOLD) -> dict[str, list[list[Item]]]:
    """strategy -> one context (a list of items) per query of the scenario, in order."""
    plain, plain_keys = replay(scenario, governed=False, threshold=threshold)
    governed, governed_keys = replay(scenario, governed=True, threshold=threshold)
    result: dict[str, list[list[Item]]] = {strategy: [] for strategy in STRATEGIES}
    for query in scenario.queries:
        text, user, tenant = query.text, query.user_id, query.tenant_id
        result["blind top-3"].append(_memory_items(plain.retrieve_without_threshold(text, user, 3, tenant_id=tenant), plain_keys))
        result["blind top-8"].append(_memory_items(plain.retrieve_without_threshold(text, user, 8, tenant_id=tenant), plain_keys))
        result["threshold only"].append(_memory_items(plain.retrieve(text, user, CAP, **query.read_scope()), plain_keys))
        result[GOVERNED].append(_governed_items(governed, query, governed_keys))
    plain.close()
    governed.close()
    return result


# -- 3. scoring: every context against its labels, summed per strategy and per kind -------------
def run_benchmark(scenarios: tuple[Scenario, ...] = SCENARIOS, threshold: float = DEFAULT_THRESHOLD,
                  kinds: tuple[str, ...] = tuple(KINDS)) -> dict[str, Any]:
    """Score every query of every scenario whose query kind is in ``kinds``; return the report."""
    totals = {strategy: Tally() for strategy in STRATEGIES}
    by_kind = {kind: {strategy: Tally() for strategy in STRATEGIES} for kind in kinds}
    misses: list[dict[str, Any]] = []
    for scenario in scenarios:
        for query, scores, miss in _score_scenario(scenario, threshold, kinds):
            for strategy, score in scores.items():
                totals[strategy] += score
                by_kind[query.kind][strategy] += score
            misses += [miss] if miss else []
    return {
        "settings": {"threshold": threshold, "cap": CAP, "kinds": list(kinds), "scenarios": len(scenarios),
                     "queries": totals[GOVERNED].queries, "languages": _languages(scenarios)},
        "strategies": {strategy: tally.to_dict() for strategy, tally in totals.items()},
        "by_kind": {kind: {s: t.to_dict() for s, t in row.items()} for kind, row in by_kind.items()},
        "targets": [_target(totals[GOVERNED], *target) for target in TARGETS],
        "governance_misses": misses,
        "scenarios": [{"name": s.name, "kind": s.kind, "lang": s.lang, "queries": len(s.queries)} for s in scenarios],
    }


def _score_scenario(scenario: Scenario, threshold: float,
                    kinds: tuple[str, ...]) -> Iterator[tuple[Query, dict[str, Tally], dict[str, Any] | None]]:
    """Per query of ``kinds``: the query, strategy -> its score, and full governance's miss (or None)."""
    truth = truth_of(scenario)
    answers = contexts(scenario, threshold)
    for index, query in enumerate(scenario.queries):
        if query.kind not in kinds:
            continue
        query_labels = labels(scenario, query, truth)
        scores = {strategy: score_query(answers[strategy][index], query_labels) for strategy in STRATEGIES}
        governed = scores[GOVERNED]
        wrong = governed.met < governed.needs or governed.polluting or governed.residue
        yield query, scores, _miss(scenario, index, answers[GOVERNED][index], query_labels) if wrong else None


def _miss(scenario: Scenario, index: int, items: list[Item], query_labels: Labels) -> dict[str, Any]:
    """A query full governance got wrong: what it missed and what it let in, with the texts."""
    missing = ["|".join(need) for need in query_labels.needs
               if not any(carries(item.key, label) for item in items for label in need)]
    polluting = {item.key: kind for item in items if (kind := must_not_kind(item, query_labels))}
    texts = {key: _text_of(scenario, key) for key in [*missing, *polluting]}
    return {"scenario": scenario.name, "query_index": index, "query": scenario.queries[index].text,
            "kind": scenario.queries[index].kind, "missing": missing, "polluting": polluting, "texts": texts}


def _text_of(scenario: Scenario, label: str) -> str:
    """A write's text; a fact label ("fact:device=Mac") or a need ("w5|fact:...") as itself."""
    texts = [scenario.writes[key].message.content for key in label.split("|") if key in scenario.writes]
    return texts[0] if texts else label


def _languages(scenarios: tuple[Scenario, ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for scenario in scenarios:
        counts[scenario.lang] = counts.get(scenario.lang, 0) + 1
    return dict(sorted(counts.items()))


def _target(tally: Tally, name: str, attribute: str, op: str, limit: float, unit: str) -> dict[str, Any]:
    value = getattr(tally, attribute)
    checks = {"<=": lambda: value <= limit, ">=": lambda: value >= limit, "==": lambda: value == limit}
    return {"name": name, "value": value, "op": op, "limit": limit, "unit": unit,
            "passed": None if value is None else checks[op]()}


# -- 4. the report ------------------------------------------------------------------------------
_HEADERS = ["precision", "recall", "pollution", "leaks", "residue", "superseded", "flips", "tokens/query"]


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _cells(tally: dict[str, Any]) -> list[str]:
    return [_ratio(tally["precision"]), _ratio(tally["recall"]), f"{100 * tally['pollution_rate']:.1f} %",
            str(tally["leaks"]), str(tally["residue"]), str(tally["superseded"]), str(tally["flips"]),
            f"{tally['tokens_per_query']:.1f}"]


def _target_cells(target: dict[str, Any]) -> list[str]:
    value, limit, percent = target["value"], target["limit"], target["unit"] == "%"
    shown = "n/a" if value is None else f"{100 * value:.1f} %" if percent else \
        f"{value:.3f}" if isinstance(value, float) else str(value)
    goal = f"{target['op']} {100 * limit:g} %" if percent else f"{target['op']} {limit:g}"
    return [target["name"], shown, goal, "n/a" if target["passed"] is None else "PASS" if target["passed"] else "FAIL"]


def format_report(report: dict[str, Any]) -> str:
    """The tables: per strategy, per kind of query, must-not memories by kind, targets, misses."""
    s = report["settings"]
    languages = ", ".join(f"{count} {lang}" for lang, count in s["languages"].items())
    title = (f"v2_memory eval pollution: {s['scenarios']} scenarios ({languages}), {s['queries']} queries; "
             f"threshold {s['threshold']:g}, threshold strategies capped at {s['cap']} memories")
    lines = [title, ""]
    lines += format_table(["strategy (all queries)"] + _HEADERS,
                          [[name] + _cells(tally) for name, tally in report["strategies"].items()])
    rows = [[f"{kind} / {strategy}"] + _cells(tally) for kind, row in report["by_kind"].items()
            for strategy, tally in row.items() if tally["queries"]]
    lines += [""] + format_table(["query kind / strategy"] + _HEADERS, rows)
    lines += ["", "must-not memories admitted, by kind of pollution"] + format_table(
        ["strategy"] + list(KINDS), [[name] + [str(tally["by_kind"].get(kind, 0)) for kind in KINDS]
                                     for name, tally in report["strategies"].items()])
    lines += [""] + format_table(["target (full governance)", "value", "target", "result"],
                                 [_target_cells(t) for t in report["targets"]], align="lrrl")
    lines += ["", (f"full governance got {len(report['governance_misses'])} queries wrong "
                   "(see one with --scenario NAME):")]
    return "\n".join(lines + [_miss_line(miss) for miss in report["governance_misses"]])


def _miss_line(miss: dict[str, Any]) -> str:
    parts = [f"missed {key} {clip(miss['texts'][key], 36)!r}" for key in miss["missing"]]
    parts += [f"let in {kind} {key} {clip(miss['texts'][key], 36)!r}" for key, kind in miss["polluting"].items()]
    return f"  {miss['scenario']} #{miss['query_index']} {clip(miss['query'], 28)!r}: " + "; ".join(parts)


# -- 5. one scenario, every step and every context: the evidence behind the numbers -------------
def scenario_report(scenario: Scenario, threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """The script, and per query its labels and each strategy's context with each item's verdict."""
    truth, answers = truth_of(scenario), contexts(scenario, threshold)
    steps = [{"key": step.key, "minute": step.minute, "user": step.message.user_id, "tenant": step.message.tenant_id,
              "role": step.message.role, "session": step.message.session_id, "task": step.message.task_id,
              "content": step.message.content, "declares": step.declares, "corrects": step.corrects}
             if isinstance(step, Write) else
             {"minute": step.minute, "do": step.call, "user": step.user_id, "tenant": step.tenant_id, "arg": step.arg}
             for step in scenario.steps]
    queries = []
    for index, query in enumerate(scenario.queries):
        query_labels = labels(scenario, query, truth)
        wanted = {label for need in query_labels.needs for label in need}
        verdict = {strategy: [(item.key, must_not_kind(item, query_labels)
                               or ("should" if any(carries(item.key, label) for label in wanted) else "ok"))
                              for item in answers[strategy][index]] for strategy in STRATEGIES}
        queries.append({"text": query.text, "user": query.user_id, "kind": query.kind, "scope": query.read_scope(),
                        "should": list(query.should), "related": list(query.related),
                        "must_not": dict(query_labels.must_not), "contexts": verdict})
    return {"name": scenario.name, "kind": scenario.kind, "lang": scenario.lang, "steps": steps, "queries": queries}


def format_scenario(report: dict[str, Any]) -> str:
    lines = [f"scenario {report['name']} ({report['kind']}, {report['lang']}); minute: step"]
    for step in report["steps"]:
        who = step["user"] + (f"@{step['tenant']}" if step["tenant"] else "")
        if "do" in step:
            lines.append(f"  {step['minute']:>3}: do {step['do']}({who}{', ' + step['arg'] if step['arg'] else ''})")
            continue
        where = "".join(f" [{name} {step[name]}]" for name in ("session", "task") if step[name])
        notes = "".join(f"  ({name} {step[name]})" for name in ("declares", "corrects") if step[name])
        lines.append(f"  {step['minute']:>3}: {step['key']} {who} {step['role']}{where}: {step['content']}{notes}")
    for index, query in enumerate(report["queries"]):
        scope = "".join(f" {name}={value}" for name, value in query["scope"].items())
        must_not = ", ".join(f"{key} ({kind})" for key, kind in query["must_not"].items())
        lines += ["", f"#{index} [{query['kind']}] {query['user']}{scope}: {query['text']}",
                  f"  should: {', '.join(query['should']) or '-'}; related: {', '.join(query['related']) or '-'}",
                  f"  must not: {must_not}"]
        lines += [f"  {strategy:<16} " + (", ".join(f"{key} {verdict}" for key, verdict in items) or "(empty)")
                  for strategy, items in query["contexts"].items()]
    return "\n".join(lines)


# -- 6. the command -----------------------------------------------------------------------------
EPILOG = (
    "Replays every scripted scenario into fresh in-memory managers, asks each labelled query of\n"
    "four strategies and reports precision, recall, pollution rate, leaks, erased residue,\n"
    "superseded memories admitted, negation flips and context size, per strategy and per kind,\n"
    "with full governance's targets (pollution <= 2 %, recall >= 0.95, no leaks, residue or flips).\n"
    "--scenario NAME shows one scenario's script, labels and every strategy's context instead.\n"
    "The second, independently written realistic chat set (cases/realistic_chat.json) follows, reported\n"
    "on its own: scenarios passed per class and language, and contexts governance made worse than none.\n"
    "Exit status: 0 (it is a report); 1 with --strict when a target fails; 2 for an unknown scenario.\n\n"
    "example: python -m v2_memory eval pollution --kind negation --kind stale --json"
)


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"threshold must be within [0, 1], got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # keep the epilog's lines as written
    parser.add_argument("--threshold", type=_threshold, default=DEFAULT_THRESHOLD,
                        help=f"similarity threshold of the threshold strategies (default: {DEFAULT_THRESHOLD})")
    parser.add_argument("--kind", action="append", choices=list(KINDS),
                        help="only queries of this kind (repeatable; default: all)")
    parser.add_argument("--scenario", metavar="NAME", help="show one scenario in full (names: see --json)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the tables")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a full-governance target fails")
    parser.add_argument("--set", dest="sets", choices=("both", "first", "realistic", *realistic.HELDOUT), default="both",
                        help="which scenario set: the first (labelled) one, the independent realistic one, or both "
                             "(default; --kind and --scenario apply to the first set only); heldout, heldout2, heldout3: issue "
                             "19's independent sets, each its tuning half in full and its sealed half by totals only")


def run_from_args(args: argparse.Namespace) -> int:
    """Run the benchmark (or show one scenario) for parsed arguments; print tables or JSON."""
    if args.scenario is not None:
        found = [scenario for scenario in SCENARIOS if scenario.name == args.scenario]
        if not found:
            print(f"error: no scenario named {args.scenario!r} (e.g. {SCENARIOS[0].name})", file=sys.stderr)
            return 2
        shown = scenario_report(found[0], args.threshold)
        print(json.dumps(shown, indent=2, ensure_ascii=False) if args.json else format_scenario(shown))
        return 0
    if args.sets in realistic.HELDOUT:
        return _heldout(args)
    kinds = tuple(dict.fromkeys(args.kind)) if args.kind else tuple(KINDS)
    first = args.sets in ("both", "first")
    second = args.sets == "realistic" or (args.sets == "both" and not args.kind and realistic.CASES.exists())
    report = run_benchmark(SCENARIOS, args.threshold, kinds) if first else {}
    other = realistic.run_realistic() if second else None
    if args.json:
        print(json.dumps({**report, **({"realistic_set": other} if other else {})}, indent=2, ensure_ascii=False))
    else:
        shown = [format_report(report)] if first else []
        print("\n\n".join(shown + ([realistic.format_realistic(other)] if other else [])))
    failed = any(target["passed"] is False for target in report.get("targets", [])) or bool(other and realistic.target_failed(other))
    return 1 if args.strict and failed else 0


def _heldout(args: argparse.Namespace) -> int:
    """One of issue 19's sets: the tuning half as the realistic set is shown, the sealed half's totals."""
    tuning_path, sealed_path = realistic.HELDOUT[args.sets]
    tuning = realistic.run_realistic(realistic.load_scenarios(tuning_path))
    sealed = realistic.sealed_totals(realistic.run_realistic(realistic.load_scenarios(sealed_path)))
    if args.json:
        print(json.dumps({"tuning": tuning, "sealed": sealed}, indent=2, ensure_ascii=False))
    else:
        print(f"{args.sets} set, tuning half:\n" + realistic.format_realistic(tuning))
        print(f"\n{args.sets} set, sealed half: {sealed['passed']}/{sealed['scenarios']} scenarios passed "
              f"({sealed['pass_rate']:.1%}), target >= {sealed['target']:.0%}; contexts worse than no governance: "
              f"{sealed['worse_than_no_governance']} (its failures stay sealed until issue 19 is done)")
    failed = realistic.target_failed(tuning) or realistic.target_failed(sealed)
    return 1 if args.strict and failed else 0
