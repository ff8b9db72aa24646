"""``python -m v2_memory eval locomo PATH``: the LoCoMo tables, for one scorer or several.

The protocol is ``locomo.py``'s; the parameter choice ``locomo_tuning.py``'s. By default every
scorer is reported under leave-one-conversation-out (each conversation searched with parameters
chosen on the others); ``--fixed`` reports one configuration, the scorer's defaults, instead.
The targets table at the end compares the runs: lexical recall@10 (1–4) >= 0.73, and hybrid at
least 0.03 above the better of bm25 and dense.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..retrieval.embedder import HashingEmbedder, SentenceTransformerEmbedder
from ..tables import format_table
from .locomo import DEFAULT_THRESHOLDS, data_summary, evaluate, load_locomo
from .locomo_tuning import KINDS, CachedEmbedder, leave_one_out

__all__ = ["NAME", "DESCRIPTION", "EPILOG", "add_arguments", "run_from_args", "format_report", "targets"]

LEXICAL_TARGET, HYBRID_MARGIN = 0.73, 0.03


# -- the report ---------------------------------------------------------------------------------
def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def format_report(report: dict[str, Any]) -> str:
    """The tables a person reads: what the file holds, each scorer run's tables, the targets."""
    lines = _data_lines(report["file"], report["data"])
    for run in report["runs"]:
        lines += [""] + _run_lines(run)
    if report.get("targets"):
        lines += [""] + format_table(["target (recall@10, 1-4)", "value", "target", "result"],
                                     [[t["name"], _num(t["value"]), t["target"], "PASS" if t["passed"] else "FAIL"]
                                      for t in report["targets"]])
    return "\n".join(lines)


def _data_lines(file: str, data: dict[str, Any]) -> list[str]:
    by_category = ", ".join(f"{category}: {count}" for category, count in data["questions"].items())
    lines = [
        (f"LoCoMo evidence recall: {file}: {data['conversations']} conversations, {data['turns']:,} turns, "
         f"questions by category {by_category}"),
        (f"evidence: {data['evidence_ids_used']:,} dia_ids used, {data['evidence_skipped']} skipped, "
         f"{data['evidence_repaired']} malformed entries read defensively; "
         f"{data['answerable_without_evidence']} answerable questions without usable evidence (left out)"),
    ]
    return lines + [f"  skipped {s['entry']!r} ({s['reason']}) in {s['sample_id']}: {s['question']}"
                    for s in data["skipped"][:10]]


def _describe(run: dict[str, Any]) -> str:
    parameters = ", ".join(f"{k}={v}" for k, v in run["scorer"].items() if k != "name")
    how = ("parameters chosen by leave-one-conversation-out" if run.get("protocol") else
           f"neighbours {run['neighbours']}{'' if run.get('dates', True) else ', no dates'}")
    return (f"scorer {run['scorer']['name']}{f' ({parameters})' if parameters else ''}; {how}; "
            f"admitted = top {run['top_k']} with score >= {run['threshold']:g}")


def _run_lines(run: dict[str, Any]) -> list[str]:
    """One run's per-category table, category 5's no-memory rate, its folds, and the threshold sweep."""
    lines = [_describe(run)] + format_table(
        ["category", "questions", "recall@5", "recall@10", "admitted recall", "mean admitted", "context tokens"],
        [[f"{row['category']} {row['name']}", str(row["questions"]), _num(row["recall@5"]), _num(row["recall@10"]),
          _num(row["admitted_recall"]), _num(row["mean_admitted"], 2), _num(row["mean_context_tokens"], 1)]
         for row in run["categories"]])
    five = run["category_5"]
    lines.append(f"5 adversarial: nothing admitted (a correct 'no memory') for {_num(five['no_memory'])} "
                 f"of {five['questions']} questions")
    if run.get("folds"):
        lines += [""] + format_table(
            ["held out", "parameters chosen on the others", "their recall@10", "held-out recall@10"],
            [[f["held_out"], ", ".join(f"{k}={v}" for k, v in f["chosen"].items()), _num(f["train_recall@10"]),
              _num(f["held_out_recall@10"])] for f in run["folds"]])
    return lines + [""] + format_table(
        ["threshold", "admitted recall (1-4)", "mean admitted", "context tokens", "1-4 nothing admitted", "5 no memory"],
        [[f"{row['threshold']:g}", _num(row["admitted_recall"]), _num(row["mean_admitted"], 2),
          _num(row["mean_context_tokens"], 1), _num(row["nothing_admitted"]), _num(row["category_5_no_memory"])]
         for row in run["sweep"]])


def targets(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets, for the runs present: lexical >= 0.73, hybrid >= best part + 0.03."""
    recall = {run["scorer"]["name"]: run["categories"][-1]["recall@10"] for run in runs}
    found = []
    if "bm25" in recall:
        found.append({"name": "lexical (bm25)", "value": recall["bm25"], "target": f">= {LEXICAL_TARGET}",
                      "passed": recall["bm25"] >= LEXICAL_TARGET})
    if {"bm25", "dense", "hybrid"} <= recall.keys():
        bar = max(recall["bm25"], recall["dense"]) + HYBRID_MARGIN
        found.append({"name": "hybrid", "value": recall["hybrid"], "target": f">= {bar:.3f} (best part + {HYBRID_MARGIN})",
                      "passed": recall["hybrid"] >= bar})
    return found


# -- the command --------------------------------------------------------------------------------
NAME = "locomo"
DESCRIPTION = "Evidence recall of retrieval on a file in LoCoMo's format (per category, threshold sweep)."
EPILOG = (
    "Each conversation is one user; every turn one record ('speaker: text'); each question one search.\n"
    "Reports evidence recall@5/@10 per category (1-4), the admitted context at --threshold, category 5's\n"
    "no-memory rate, and a threshold sweep; parameters chosen by leave-one-conversation-out unless\n"
    "--fixed. dense and hybrid need the 'dense' extra (or --embedder hashing, a model-free stand-in).\n"
    "Progress goes to stderr. LoCoMo: Maharana et al., ACL 2024.\n\n"
    "example: python -m v2_memory eval locomo ../shared/data/locomo/locomo_dev.json --scorer article,bm25,dense,hybrid"
)


def _thresholds(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values or any(not 0.0 <= value <= 1.0 for value in values):
        raise argparse.ArgumentTypeError("every threshold must be within [0, 1]")
    return values


def _count(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)


def _scorers(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in KINDS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected scorers from {', '.join(KINDS)} (comma-separated), got {text!r}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # keep the epilog's lines as written
    parser.add_argument("path", type=Path, help="a JSON file in LoCoMo's format (a list of conversations)")
    parser.add_argument("--scorer", type=_scorers, default=["bm25"],
                        help="article, bm25, dense or hybrid; several comma-separated (default: bm25)")
    parser.add_argument("--compare", action="store_true", help="the same as --scorer article,bm25")
    parser.add_argument("--fixed", action="store_true",
                        help="one configuration (the scorer's defaults, --neighbours) instead of leave-one-out; "
                             "article and bm25 only")
    parser.add_argument("--neighbours", type=_count, default=1,
                        help="with --fixed: index each turn with this many turns before and after it (default: 1)")
    parser.add_argument("--no-dates", action="store_true", help="with --fixed: do not index the date a turn was said")
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm",
                        help="for dense and hybrid: all-MiniLM-L6-v2 (the dense extra) or the model-free hashing one")
    parser.add_argument("--embedding-cache", type=Path, help="a JSON file that keeps the embeddings between runs")
    parser.add_argument("--top-k", type=_count, default=10, help="results a context may admit (default: 10)")
    parser.add_argument("--threshold", type=float, default=0.2, help="score a result needs to be admitted (default: 0.2)")
    parser.add_argument("--thresholds", type=_thresholds, default=list(DEFAULT_THRESHOLDS),
                        help="comma-separated thresholds for the sweep (default: 0,0.05,0.1,0.15,0.2,0.25,0.3,0.4,0.5)")
    parser.add_argument("--limit-conversations", type=_count, help="only the first N conversations")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the tables")


def run_from_args(args: argparse.Namespace) -> int:
    """Load, evaluate each scorer, print the report; progress on stderr."""
    if args.top_k < 1 or not 0.0 <= args.threshold <= 1.0:
        raise ValueError("--top-k must be >= 1 and --threshold within [0, 1]")
    scorers = ["article", "bm25"] if args.compare else args.scorer
    if args.fixed and set(scorers) - {"article", "bm25"}:
        raise ValueError("--fixed runs article and bm25 only: dense and hybrid are reported under leave-one-out")
    conversations = load_locomo(args.path)[: args.limit_conversations]
    progress = lambda line: print(f"locomo: {line}", file=sys.stderr, flush=True)  # noqa: E731
    settings = {"top_k": args.top_k, "threshold": args.threshold, "thresholds": args.thresholds, "progress": progress}
    embedder = _embedder(args) if set(scorers) & {"dense", "hybrid"} else None
    if args.fixed:
        runs = [evaluate(conversations, name, neighbours=args.neighbours, dates=not args.no_dates, **settings)
                for name in scorers]
    else:
        runs = [leave_one_out(conversations, name, embedder=embedder, **settings) for name in scorers]
    report = {"file": str(args.path), "data": data_summary(conversations), "runs": runs,
              "targets": [] if args.fixed else targets(runs)}
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report))
    return 0


def _embedder(args: argparse.Namespace) -> CachedEmbedder:
    inner = HashingEmbedder(256) if args.embedder == "hashing" else SentenceTransformerEmbedder()
    return CachedEmbedder(inner, args.embedding_cache)
