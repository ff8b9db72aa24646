"""The article's demo: blind top-k against a threshold, per-user tracks, and a real erase.

Run it as ``python v2_memory/main.py`` (repo root), ``python main.py`` (inside ``v2_memory/``) or
``python -m v2_memory demo``. It replays a five-turn conversation with a small rule-based agent
(whose replies are stored too), one off-topic noise message and a guest user's private note, then
asks ``"记忆污染 阈值 Agent"`` twice — blind top-8 and thresholded at 0.22 — erases the guest, and
writes ``trace.json`` / ``trace.js`` (and the store) for ``visualization.html`` to show.

Where: next to this file in a source checkout (the README's ``python v2_memory/main.py``), else the
current folder — an installed package never writes into site-packages — or ``--out DIR``. Every
argument is checked before anything is written.
"""
from __future__ import annotations

import argparse
import inspect
import itertools
import json
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Sequence

if __package__ in (None, ""):
    # Run as a script: the folder of this file is sys.path[0]; put the repo root there instead so
    # `import v2_memory` works and no module here can shadow a standard-library one.
    _HERE = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
    sys.path.insert(0, str(_HERE.parent))

from v2_memory.cli.guard import run_guarded  # noqa: E402
from v2_memory.demo.sessions import CLEAN, POLLUTED, record_sessions  # noqa: E402
from v2_memory.observe.inspector import diff_sessions  # noqa: E402
from v2_memory.manager import MemoryManager  # noqa: E402
from v2_memory.messages import Message  # noqa: E402
from v2_memory.demo.scenes import run_scenes  # noqa: E402
from v2_memory.tables import escape  # noqa: E402
from v2_memory.demo.traces import write_trace  # noqa: E402
from v2_memory.validation import check_threshold, check_top_k, require_text  # noqa: E402

__all__ = ["DemoAgent", "run_demo", "main"]

HERE = Path(__file__).resolve().parent
PAGE = "visualization.html"
STORE_FILE = "memory_store.json"
DEFAULT_QUERY = "记忆污染 阈值 Agent"
GENERATED_BY = "v2_memory demo"
# The library's own default, for the note on why the demo uses 0.22 (the article's choice) instead.
LIBRARY_THRESHOLD = inspect.signature(MemoryManager).parameters["threshold"].default

# The article's scenario, in the order it is written.
CONVERSATION = [
    "我在写 Agent 专栏，关注 ReAct 状态机。",
    "如何治理记忆污染？",
    "请记录第二篇要讨论记忆污染。",
    "继续讨论向量检索阈值。",
    "下一步把这些整理成文章大纲。",
]
NOISE = "今天午饭吃什么？顺便喝杯咖啡，聊聊天气。"
GUEST_ID = "guest"
USER_ID = "default"  # the article's user, named on every call as an agent serving several users must
GUEST_NOTE = "guest 的私人笔记：体检报告下周三出来，别告诉别人。我也在看记忆污染 阈值 Agent。"


def demo_clock(start: datetime = datetime(2026, 6, 22, tzinfo=timezone.utc)):
    """A deterministic clock: each call is one minute after the previous (same trace every run)."""
    ticks = itertools.count()
    return lambda: start + timedelta(minutes=next(ticks))


class DemoAgent:
    """A deterministic stand-in for an LLM: reads its context, answers by rule, and is remembered.

    Storing its replies is the point: they are what fills the blind top-k with the agent's echoes.
    """

    PLAN = "先做阈值过滤，再把短期窗口、摘要记忆和长期检索分层处理。"
    ACK = "收到，我会记住你的专栏方向。"
    DEFAULT = "我会基于当前会话窗口和通过阈值筛选的历史记忆回答。"

    def __init__(self, manager: MemoryManager) -> None:
        self.manager = manager
        self.contexts: list[str] = []  # the context each reply was built from

    def chat(self, text: str, user_id: str = "default") -> str:
        self.manager.add(Message("user", text, user_id))
        self.contexts.append(self.manager.build_context(text, user_id))
        reply = self.PLAN if "如何" in text else self.ACK if text.startswith("我在") else self.DEFAULT
        self.manager.add(Message("assistant", reply, user_id))
        return reply


def default_out_dir() -> Path:
    """Next to this file in a source checkout; otherwise (an installed package) the current folder.

    A source checkout is this folder with the project's ``pyproject.toml`` beside it, outside any
    site-packages: writing the demo's files into an installation would mix them with the package.
    """
    installed = {"site-packages", "dist-packages"} & set(HERE.parts)
    return HERE if (HERE.parent / "pyproject.toml").is_file() and not installed else Path.cwd()


def check_arguments(query: str, threshold: float, top_k: int, window_size: int, out_dir: Path) -> None:
    """Every argument, checked before the demo writes anything (the library's own checks)."""
    require_text("query", query)
    check_threshold(threshold, allow_none=False)
    check_top_k(top_k)
    MemoryManager(window_size=window_size, threshold=threshold, store_path=None).close()  # nothing on disk
    # The folder: it may be missing (it is created), but neither it nor a parent may be a file.
    blocker = next((p for p in [out_dir, *out_dir.parents] if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ValueError(f"--out {out_dir}: {blocker} is a file, not a folder")
    if out_dir.is_dir():
        _previous_run(out_dir)  # refuses a store the demo did not write


def run_demo(
    query: str = DEFAULT_QUERY,
    threshold: float = 0.22,
    top_k: int = 8,
    window_size: int = 4,
    out_dir: Path | str | None = None,
) -> dict[str, Any]:
    """Replay the scenario into a fresh store under ``out_dir``; return the trace it wrote."""
    out_dir = default_out_dir() if out_dir is None else Path(out_dir)
    check_arguments(query, threshold, top_k, window_size, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    store_path = out_dir / STORE_FILE
    for path in _previous_run(out_dir):  # every run starts from an empty store
        path.unlink()
    with MemoryManager(
        window_size=window_size, threshold=threshold, store_path=store_path, clock=demo_clock()
    ) as manager:
        agent = DemoAgent(manager)
        for text in CONVERSATION:
            agent.chat(text)
        manager.add(Message("user", NOISE, USER_ID))
        manager.add(Message("user", GUEST_NOTE, GUEST_ID))
        sessions = record_sessions(manager)  # for the inspector: a clean and a polluted session
        trace = _trace(manager, query, top_k)
        guest_before = manager.retrieve_without_threshold(query, GUEST_ID, top_k)
        receipt = manager.erase_user(GUEST_ID)
        trace["isolation"] = {
            "guest_hits_before_erase": len(guest_before),
            "guest_text_in_default_context": GUEST_NOTE in trace["context"],
        }
        trace["erase_receipt"] = receipt.to_dict()
        # File names, not absolute paths: a shared trace should not reveal the machine's layout.
        trace["erase_receipt"]["files_rewritten"] = [Path(f).name for f in receipt.files_rewritten]
        trace["guest_records_after_erase"] = manager.store.records(GUEST_ID)
        trace["erase_verification"] = _verify_erasure(manager, query, store_path)
        trace["users"] = {user: _user_tracks(manager, user) for user in ["default", GUEST_ID]}
        trace["sessions"] = {"recorded": sessions, "first_difference": _first_difference(manager)}
        trace["health"] = manager.health().to_dict()
    trace["scenes"] = run_scenes(threshold)
    trace["files"] = {"store": STORE_FILE, "trace": "trace.json", "page": PAGE}
    trace["library_threshold"] = LIBRARY_THRESHOLD
    rates = MemoryManager.default_rates()  # the factor a read applies to a memory it returns
    trace["usage_decay"] = rates.usage_reinforce if rates.usage == "reinforce" else rates.usage_hit
    write_trace(trace, out_dir)
    if out_dir.resolve() != HERE:
        shutil.copyfile(HERE / PAGE, out_dir / PAGE)  # keep the page next to its data
    return trace


DEMO_FILES = (STORE_FILE, "memory_store.governance.sqlite3", "memory_store.writes.jsonl", "memory_store.reads.jsonl")


def _with_companions(out_dir: Path) -> list[str]:
    """The demo's file names, plus what they may leave beside them: SQLite's journals and the logs'
    rotated copies (``memory_store.writes.1.jsonl``), which a fresh run must not read back."""
    names = [*DEMO_FILES, *(f"{name}{tail}" for name in DEMO_FILES if name.endswith(".sqlite3")
                            for tail in ("-wal", "-shm", "-journal"))]
    for log in (name for name in DEMO_FILES if name.endswith(".jsonl")):
        stem = log[: -len(".jsonl")]
        names += sorted(p.name for p in out_dir.glob(f"{stem}.*.jsonl") if p.name[len(stem) + 1:-6].isdigit())
    return names


def _previous_run(out_dir: Path) -> list[Path]:
    """The files of an earlier demo run in ``out_dir``, to remove — or an error for a store the demo
    did not write.

    The demo's trace.json says it was generated by the demo; without it, a memory_store.json in
    ``out_dir`` is somebody's real memory, and deleting it would be unforgivable.
    """
    existing = [path for path in map(out_dir.joinpath, _with_companions(out_dir)) if path.exists()]
    if not existing:
        return []
    try:
        ours = json.loads((out_dir / "trace.json").read_text(encoding="utf-8")).get("generated_by") == GENERATED_BY
    except (OSError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise ValueError(f"{existing[0]} exists and was not written by the demo; choose another --out folder")
    return existing


def _trace(manager: MemoryManager, query: str, top_k: int) -> dict[str, Any]:
    # explain() and the blind search first: they have no side effects. build_context() and retrieve()
    # count as use (usage: each reinforces what it returned, ×1.25 up to 1.0), so the
    # context is built before retrieve(): then the governed view and the context show the same
    # weights, the ones every memory had before this query used it.
    governed = manager.explain(query, USER_ID, top_k)
    blind = manager.retrieve_without_threshold(query, USER_ID, top_k)
    context = manager.build_context(query, USER_ID, top_k)
    kept = manager.retrieve(query, USER_ID, top_k)
    return {
        "generated_by": GENERATED_BY,
        "query": query,
        "threshold": manager.threshold,
        "top_k": top_k,
        "window_size": manager.window_size,
        "summary_memory": manager.summary("default"),
        "recent_messages": [_message_dict(m) for m in manager.recent_messages("default")],
        "blind_top_k": [hit.to_dict() for hit in blind],
        "thresholded": [hit.to_dict() for hit in kept],
        "context": context,
        "governed": {
            "route": governed.route.to_dict(),
            "admissions": [admission.to_dict() for admission in governed.admissions],
            "admitted": [admission.record_id for admission in governed.admitted],
        },
    }


def _first_difference(manager: MemoryManager) -> str | None:
    """What ``diff --session-id s-clean --session-id s-polluted`` reports first."""
    return diff_sessions(manager.audit.writes(), manager.audit.reads(), CLEAN, POLLUTED).first


def _user_tracks(manager: MemoryManager, user_id: str) -> dict[str, Any]:
    return {
        "summary": manager.summary(user_id),
        "recent_messages": [_message_dict(m) for m in manager.recent_messages(user_id)],
        "long_term_records": len(manager.store.records(user_id)),
    }


def _verify_erasure(manager: MemoryManager, query: str, store_path: Path) -> dict[str, Any]:
    """Look for the guest's note everywhere it could hide, after the erase."""
    return {
        "store_records": len(manager.store.records(GUEST_ID)),
        "window_messages": len(manager.recent_messages(GUEST_ID)),
        "summary_empty": manager.summary(GUEST_ID) == "",
        # explain(), not build_context(): a verification should not itself leave a read in the log.
        "in_guest_context": any(GUEST_NOTE in a.record["content"] for a in manager.explain(query, GUEST_ID, 8)),
        "bytes_in_store_file": GUEST_NOTE.encode("utf-8") in store_path.read_bytes(),
    }


def _message_dict(message: Message) -> dict[str, Any]:
    return {"user_id": message.user_id, "role": message.role, "content": message.content}


def print_report(trace: dict[str, Any], out_dir: Path) -> None:
    """The demo's printout: the article's table first, then governance, then where the files are."""
    for line in [*_article_lines(trace), *_governance_lines(trace), *_closing_lines(trace, out_dir)]:
        print(escape(line))  # memory text is shown, never obeyed: escapes and bidi overrides stay visible


def _article_lines(trace: dict[str, Any]) -> list[str]:
    lines = [f"query: {trace['query']}", f"blind top-{trace['top_k']} (retrieve_without_threshold):"]
    lines += [f"  {h['score']:.3f} {h['record']['role']}: {h['record']['content']}" for h in trace["blind_top_k"]]
    lines.append(f"thresholded (retrieve, score >= {trace['threshold']}):")
    lines += [f"  {h['score']:.3f} {h['record']['role']}: {h['record']['content']}" for h in trace["thresholded"]]
    lines.append(threshold_note(trace))
    lines.append("context (build_context):")
    return lines + [f"  {line}" for line in trace["context"].splitlines()]


def threshold_note(trace: dict[str, Any]) -> str:
    """Why the demo's threshold is 0.22, and what the library's default would let through.

    >>> threshold_note({"library_threshold": 0.2, "blind_top_k": [
    ...     {"score": 0.354, "record": {"role": "user"}}, {"score": 0.204, "record": {"role": "assistant"}},
    ...     {"score": 0.083, "record": {"role": "user"}}]})
    "note: at 0.2 (MemoryManager's default) blind top-3 would keep 2 of 3, 1 of them the agent's own replies; the article's 0.22 sits just above those replies (best 0.204)"
    """
    default, hits = trace.get("library_threshold", LIBRARY_THRESHOLD), trace["blind_top_k"]
    passing = [h for h in hits if h["score"] >= default]
    echoes = [h["score"] for h in hits if h["record"]["role"] == "assistant"]
    note = (f"note: at {default} (MemoryManager's default) blind top-{len(hits)} would keep {len(passing)} of "
            f"{len(hits)}, {sum(h['record']['role'] == 'assistant' for h in passing)} of them the agent's own replies")
    return note + (f"; the article's 0.22 sits just above those replies (best {max(echoes):.3f})" if echoes else "")


def _governance_lines(trace: dict[str, Any]) -> list[str]:
    lines = [f"governed view (explain, threshold {trace['threshold']}):"]
    for a in trace["governed"]["admissions"]:
        verdict = "admitted" if a["admitted"] else "rejected: " + ", ".join(a["reasons"])
        lines.append(f"  {a['similarity']:.3f} x {a['weight']:.2f} = {a['effective']:.3f} {a['role']}: {a['content']}"
                     f"  [{verdict}]")
    lines.append(f"  (weights before this query used any memory, as in the context above; every read that returns a "
                 f"memory then multiplies its weight by {trace.get('usage_decay', 1.25)}, up to 1.00, and one passed "
                 "over 3 times in a row loses x0.8: usage)")
    lines.append("scenes (without governance -> with governance):")
    for scene in trace["scenes"]:
        lines.append(f"  {scene['title']} | query: {scene['query']}")
        for side in ("without_governance", "with_governance"):
            shown = scene[side]["memory_lines"] or ["(nothing from long-term memory)"]
            lines.append(f"    {side.replace('_', ' ')}: " + " || ".join(shown))
    return lines


def _closing_lines(trace: dict[str, Any], out_dir: Path) -> list[str]:
    removed = trace["erase_receipt"]["removed"]
    return [
        f"health: {trace['health']['status']} — " + ", ".join(  # the worst first: the line says why
            f"{m['name']} {m['shown']} ({m['status']})" for m in sorted(
                trace["health"]["metrics"], key=lambda m: ["bad", "warn", "ok", "n/a"].index(m["status"]))[:3]),
        f"sessions for the inspector: {', '.join(trace['sessions']['recorded'])}; "
        f"first difference: {trace['sessions']['first_difference']}",
        f"erase_user('guest'): removed {removed}; guest_records_after_erase = {trace['guest_records_after_erase']}",
        f"wrote {', '.join(['trace.json', 'trace.js', *DEMO_FILES])} in {out_dir}",
        f"open {(out_dir / PAGE).resolve().as_uri()}",
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options (shared by ``main.py`` and ``python -m v2_memory demo``)."""
    parser.add_argument("--query", default=DEFAULT_QUERY, help=f"the query to ask (default: {DEFAULT_QUERY!r})")
    parser.add_argument("--threshold", type=float, default=0.22,
                        help="the similarity threshold, in [0, 1] (default: 0.22, the article's)")
    parser.add_argument("--top-k", type=int, default=8, help="how many hits blind top-k returns (default: 8)")
    parser.add_argument("--window-size", type=int, default=4, help="messages kept in each user's window (default: 4)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="the folder for trace.json, trace.js, the store, its logs and a copy of the page "
                             "(default: next to main.py in a source checkout, else the current folder)")
    parser.add_argument("--json", action="store_true", help="print the trace as JSON instead of the report")


DESCRIPTION = "Reproduce the article's blind top-k vs threshold table and write trace.json for the page."
EPILOG = ("Also runs as python -m v2_memory demo and v2-memory demo. Every option is checked before\n"
          "anything is written; an existing store the demo did not write is never touched.\n\n"
          "example: python v2_memory/main.py --threshold 0.2 --top-k 5 --out /tmp/demo")


def run_from_args(args: argparse.Namespace) -> int:
    """Run the demo for parsed arguments and print the report (or, with ``--json``, the trace)."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # a non-UTF-8 console must not crash the demo
    out_dir = default_out_dir() if args.out is None else args.out
    trace = run_demo(args.query, args.threshold, args.top_k, args.window_size, out_dir)
    if args.json:
        print(json.dumps(trace, ensure_ascii=False, indent=2))
    else:
        print_report(trace, out_dir)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python v2_memory/main.py``: the demo alone, with the command line's error handling (exit 2)."""
    parser = argparse.ArgumentParser(prog="main.py", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run_guarded(run_from_args, parser.parse_args(argv), failure=2)


if __name__ == "__main__":
    raise SystemExit(main())
