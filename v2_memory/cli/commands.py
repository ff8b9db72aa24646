"""The inspector's commands — ``inspect``, ``health``, ``diff``, ``erase-user``, ``migrate`` — as thin layers.

Each one opens the store folder (read-only, except ``erase-user``; ``migrate`` writes only its target), makes one library call, and
prints a readable table, or JSON with ``--json``. ``app.py`` registers them next to ``demo`` and
``bench``. Whatever comes from memory (texts, ids, reasons) is printed escaped (``tables.escape``):
a stored escape sequence or bidi override is shown, never obeyed by the terminal.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..observe.audit import AuditEvent
from ..observe.health import health_report
from ..observe.inspector import STORE_FILE, Turn, diff_sessions, open_store_dir, session_owners, session_turns, sessions
from ..manager import MemoryManager
from ..storage.backends import backend_of
from ..storage.database import consistent_reads
from ..storage.migrate import migrate
from ..storage.track_tables import TrackTables
from ..tables import clip, escape, format_table

__all__ = ["COMMANDS", "NOTHING_FOUND", "store_argument", "store_file"]

# The exit status of a command that ran and found nothing to act on (an unknown user, no match):
# a script tells it from a failure (1) and from a wrong command line (2).
NOTHING_FOUND = 3


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, metavar="PATH",
                        help=f"the folder holding {STORE_FILE} (or the store file itself), a SQLite file "
                             "(.sqlite3, sqlite:///path) or a postgresql://... URL")


def store_file(where: str) -> Path | str:
    """The store ``--store`` names (a SQLite or server URL as it is), or an error saying whether
    the folder or the file is missing."""
    backend, path = backend_of(where)
    if backend == "postgres":
        return where
    store = Path(path)
    if backend == "sqlite" and store.is_file():
        return where if where.startswith("sqlite:///") else store
    if store.is_dir():
        if not (store / STORE_FILE).is_file():
            raise ValueError(f"folder {store} holds no {STORE_FILE} (run the demo with --out {store}, "
                             "or point --store at your store's folder)")
        return store / STORE_FILE
    if store.exists():
        return store
    missing = next((p for p in reversed([store, *store.parents]) if not p.exists()), store)
    if missing != store or not store.suffix:  # a path without an extension names a folder
        raise ValueError(f"folder {missing} does not exist")
    raise ValueError(f"file {store} does not exist")


def _require_sessions(events: list[AuditEvent], *session_ids: str) -> None:
    """Refuse a session id the write log never saw, listing the ones it did (inspect and diff alike)."""
    known = sessions(events)
    for session_id in session_ids:
        if session_id not in known:
            listed = ", ".join(f"{sid} ({', '.join(u for _, u in who)})" for sid, who in known.items()) or "none"
            raise ValueError(f"no session {session_id!r} in the logs; sessions there: {listed}")


# -- inspect ----------------------------------------------------------------------------------------

def _inspect_arguments(parser: argparse.ArgumentParser) -> None:
    store_argument(parser)
    parser.add_argument("--session-id", required=True, help="the session to look at")
    parser.add_argument("--user-id", help="whose session, when several users share the session id")
    parser.add_argument("--tenant-id", help="the user's tenant, if any")
    parser.add_argument("--window", type=_positive, default=5, help="how many of the latest turns (default: 5)")
    parser.add_argument("--json", action="store_true", help="print the turns as JSON")


def _inspect(args: argparse.Namespace) -> int:
    with open_store_dir(store_file(args.store)) as opened:
        events, reads = opened.audit.writes(), opened.audit.reads()
    _require_sessions(events, args.session_id)
    owners = session_owners(events, args.session_id)
    owner = (args.tenant_id, args.user_id) if args.user_id else owners[0] if len(owners) == 1 else None
    if owner is None and owners:
        raise ValueError(f"session {args.session_id!r} has several users ({', '.join(u for _, u in owners)}); "
                         "pass --user-id")
    turns = session_turns(events, reads, args.session_id, args.window, owner)
    if args.json:
        _print_json([turn.to_dict() for turn in turns])
        return 0
    print(escape(f"session {args.session_id} of user {owner[1]!r}" + (f" (tenant {owner[0]!r})" if owner[0] else "")
                 + f" — last {len(turns)} turn(s)"))
    for turn in turns:
        _print_turn(turn)
    return 0


def _print_turn(turn: Turn) -> None:
    print(f"\n== turn {turn.index}")
    rows = [[str(w.data.get("record_id") or "-"), str(w.data.get("role") or ""),
             w.kind if w.kind != "write" else str(w.data.get("source")),
             "yes" if w.data.get("verified") else "no" if w.kind == "write" else "", _weight(w.data.get("weight")),
             clip(", ".join(w.data.get("reasons", [])) or _detail(w), 40), clip(w.data.get("content") or "", 40)]
            for w in turn.writes]
    if rows:
        print("writes:")
        print("\n".join(format_table(["record", "role", "source", "verified", "weight", "reasons", "content"], rows,
                                     "rlllrll")))
    if turn.read is None:
        print("(no response yet)")
        return
    read = turn.read.data
    print(escape(f"read: {read.get('call')} query {read.get('query')!r}, route {read.get('route', {}).get('kind')}"))
    candidates = [[str(c.get("record_id")), f"{c.get('similarity', 0):.3f}", _weight(c.get("weight")),
                   f"{c.get('effective', 0):.3f}", "admitted" if c.get("admitted") else "rejected",
                   clip(", ".join(c.get("reasons", [])), 36), clip(c.get("content") or "", 36)]
                  for c in read.get("candidates", [])]
    if candidates:
        print("\n".join(format_table(["record", "sim", "weight", "effective", "verdict", "reasons", "content"],
                                     candidates, "rrrrlll")))
    print(f"context: {read.get('context_tokens', 0)} tokens")
    for line in turn.added:
        print(f"  + {clip(line, 100)}")
    for line in turn.removed:
        print(f"  - {clip(line, 100)}")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _weight(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else ""


def _detail(event: AuditEvent) -> str:
    return ", ".join(f"{k}={v}" for k, v in event.data.items() if k in ("task_id", "key", "record_id", "completion"))


# -- health -----------------------------------------------------------------------------------------

def _health_arguments(parser: argparse.ArgumentParser) -> None:
    store_argument(parser)
    parser.add_argument("--now", metavar="WHEN", help="judge the weights at this moment: an ISO 8601 time, or 'now' "
                                                      "for the wall clock (default: the store's newest logged event)")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")


def _health(args: argparse.Namespace) -> int:
    with open_store_dir(store_file(args.store)) as opened, consistent_reads(opened.ledger.db):
        records, writes, reads = opened.store.all_records(), opened.audit.writes(), opened.audit.reads()
        report = health_report(records, opened.ledger.states(r["record_id"] for r in records), writes, reads,
                               rates=MemoryManager.default_rates(), now=_judged_at(args.now, writes + reads))
    if args.json:
        _print_json(report.to_dict())
        return 0
    rows = [[m.name, m.shown(), m.status, m.rule] for m in report.metrics]
    print("\n".join(format_table(["metric", "value", "status", "rule"], rows, "lrll")))
    print(f"\noverall: {report.status}")
    return 0


def _judged_at(when: str | None, events: list[AuditEvent]) -> datetime:
    """The moment weights are read at: the store's own clock (its newest event) unless told."""
    if when == "now" or (when is None and not events):
        return datetime.now(timezone.utc)
    if when is None:
        return max(datetime.fromisoformat(e.time) for e in events)
    try:
        moment = datetime.fromisoformat(when)
    except ValueError:
        raise ValueError(f"--now must be an ISO 8601 time like 2026-06-22T12:00:00+00:00, or 'now'; got {when!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


# -- diff -------------------------------------------------------------------------------------------

def _diff_arguments(parser: argparse.ArgumentParser) -> None:
    store_argument(parser)
    parser.add_argument("--session-id", action="append", required=True, dest="sessions", metavar="SESSION_ID",
                        help="give it twice: the good session, then the bad one")
    parser.add_argument("--json", action="store_true", help="print the aligned logs and differences as JSON")


def _diff(args: argparse.Namespace) -> int:
    if len(args.sessions) != 2:
        raise ValueError("diff needs exactly two --session-id options")
    with open_store_dir(store_file(args.store)) as opened:
        events, reads = opened.audit.writes(), opened.audit.reads()
    _require_sessions(events, *args.sessions)
    result = diff_sessions(events, reads, *args.sessions)
    if args.json:
        _print_json(result.to_dict())
        return 0
    a, b = args.sessions
    rows = [[str(i + 1), clip(_short(x), 44), clip(_short(y), 44)] for i, (x, y) in enumerate(result.writes)]
    print(escape(f"writes, side by side (A = {a}, B = {b}):"))
    print("\n".join(format_table(["#", f"A {a}", f"B {b}"], rows, "rll")))
    if not result.differences:
        print("\nno difference in writes, weights, verification or admissions")
        return 0
    print(f"\nfirst difference: {escape(result.first)}")
    for line in result.differences[1:]:
        print(f"  then: {escape(line)}")
    return 0


def _short(event: AuditEvent | None) -> str:
    if event is None:
        return "—"
    d = event.data
    return f"{d.get('source')} {'✓' if d.get('verified') else '✗'} w={d.get('weight')} {d.get('content')!r}"


# -- erase-user -------------------------------------------------------------------------------------

def _erase_arguments(parser: argparse.ArgumentParser) -> None:
    store_argument(parser)
    parser.add_argument("user_id", help="the user to erase")
    parser.add_argument("--tenant-id", help="the user's tenant, if any")
    parser.add_argument("--yes", action="store_true", help="really erase (this cannot be undone)")
    parser.add_argument("--json", action="store_true", help="print the receipt as JSON")


def _erase(args: argparse.Namespace) -> int:
    if not args.yes:
        print("error: erase-user cannot be undone; add --yes to erase", file=sys.stderr)
        return 2
    path = store_file(args.store)
    with open_store_dir(path) as opened:  # read-only first: an unknown user must change nothing
        # Known by any trace: records, a track (a window of filler holds no record), or a log event
        # (the logs keep only their newest events, so they alone cannot say who is unknown).
        scope = (args.tenant_id, args.user_id)
        known = (opened.store.records(args.user_id, tenant_id=args.tenant_id)
                 or scope in TrackTables(opened.ledger.db).scopes()
                 or any((e.tenant_id, e.user_id) == scope for e in opened.audit.writes() + opened.audit.reads()))
        shown = opened.store_path  # a server's URL with its password masked
    if not known:
        print(escape(f"no memory of user {args.user_id!r} in {shown}; nothing was erased"), file=sys.stderr)
        return NOTHING_FOUND
    with MemoryManager(store_path=path) as manager:
        receipt = manager.erase_user(args.user_id, tenant_id=args.tenant_id)
    if args.json:
        _print_json(receipt.to_dict())
        return 0
    rows = [[track, str(count)] for track, count in receipt.to_dict()["removed"].items()]
    print(escape(f"erased user {args.user_id!r}" + (f" (tenant {args.tenant_id!r})" if args.tenant_id else "")))
    print("\n".join(format_table(["track", "removed"], rows)))
    for file in receipt.files_rewritten:
        print(f"rewrote {escape(file)}")
    folder = path.parent if isinstance(path, Path) else None  # the demo writes its traces beside a file store
    traces = [p.name for p in (folder / "trace.json", folder / "trace.js") if p.exists()] if folder else []
    if traces:
        print(f"note: {' and '.join(traces)} here were written by the demo, not the library's tracks; "
              "they may still quote this user: delete them or run the demo again")
    return 0


# -- migrate ----------------------------------------------------------------------------------------

def _migrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="the store to copy: a .json store file, a .sqlite3 file, sqlite:///path "
                                       "or postgresql://... (only read, never changed)")
    parser.add_argument("target", help="where to copy it: a new (or empty) store of any backend")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def _migrate(args: argparse.Namespace) -> int:
    report = migrate(args.source, args.target)
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(escape(f"copied {report.source} ({report.source_backend}) to {report.target} ({report.target_backend})"))
    rows = [[name, str(a), str(b), "ok" if a == b else "MISMATCH"] for name, (a, b) in report.counts.items()]
    print("\n".join(format_table(["table / track", "source", "target", "check"], rows, "lrrl")))
    return 0


# name -> (help, example, add_arguments, run)
COMMANDS: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "inspect": ("Show the last turns of a session: writes, reads with every candidate's verdict, context diffs.",
                "python -m v2_memory inspect --store v2_memory --session-id s-polluted --window 5",
                _inspect_arguments, _inspect),
    "health": ("Show the memory health dashboard: pollution rate, decay efficiency, leakage and more.",
               "python -m v2_memory health --store v2_memory --json", _health_arguments, _health),
    "diff": ("Line up two sessions' logs (a snapshot diff) and show where they first differ.",
             "python -m v2_memory diff --store v2_memory --session-id s-clean --session-id s-polluted",
             _diff_arguments, _diff),
    "erase-user": ("Erase a user from every track and file, with a receipt. This cannot be undone.",
                   "python -m v2_memory erase-user --store v2_memory guest --yes", _erase_arguments, _erase),
    "migrate": ("Copy a store to another backend (ids, ledger, tracks, logs), check the counts; the source is "
                "never changed.", "python -m v2_memory migrate v2_memory/memory_store.json memory.sqlite3",
                _migrate_arguments, _migrate),
}
