"""What an agent remembers, from the command line — ``users``, ``recall``, ``export`` — read-only.

Each opens the store read-only (no lock taken, nothing written, no read logged: an agent may be
running on it), makes one library call and prints a table, or JSON with ``--json``. "Nothing
found" is not an error: it exits with ``NOTHING_FOUND`` (3), as ``erase-user`` does for an unknown
user, so a script can tell an empty answer (3) from a failure (1) and a wrong command line (2).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from ..observe.export import export_user
from ..observe.inspector import open_store_dir
from ..observe.recall import recall
from ..tables import clip, escape, format_table
from .commands import NOTHING_FOUND, store_argument, store_file

__all__ = ["MEMORY_COMMANDS", "NOTHING_FOUND"]


def _scope_arguments(parser: argparse.ArgumentParser) -> None:
    store_argument(parser)
    parser.add_argument("user_id", help="whose memory")
    parser.add_argument("--tenant-id", help="the user's tenant, if any")


# -- users ----------------------------------------------------------------------------------------

def _users_arguments(parser: argparse.ArgumentParser) -> None:
    store_argument(parser)
    parser.add_argument("--tenant-id", help="list the users of this tenant (default: users without a tenant)")
    parser.add_argument("--json", action="store_true", help="print the users and their record counts as JSON")


def _users(args: argparse.Namespace) -> int:
    with open_store_dir(store_file(args.store)) as opened:
        counts = {user: len(opened.store.records(user, tenant_id=args.tenant_id))
                  for user in opened.store.users(tenant_id=args.tenant_id)}
    if args.json:
        print(json.dumps([{"user_id": u, "records": n} for u, n in counts.items()], ensure_ascii=False, indent=2))
    elif counts:
        print("\n".join(format_table(["user", "records"], [[u, str(n)] for u, n in counts.items()], "lr")))
    else:
        print("no users with long-term memories in this store" + (f" under tenant {args.tenant_id!r}" if args.tenant_id else ""),
              file=sys.stderr)
    return 0 if counts else NOTHING_FOUND


# -- recall ---------------------------------------------------------------------------------------

def _recall_arguments(parser: argparse.ArgumentParser) -> None:
    _scope_arguments(parser)
    parser.add_argument("query", help="what the agent would be asked")
    parser.add_argument("--session-id", help="read as inside this session")
    parser.add_argument("--task-id", help="read as inside this task")
    parser.add_argument("--top-k", type=int, default=3, help="how many memories may be admitted (default: 3)")
    parser.add_argument("--threshold", type=float, default=0.2, help="the relevance threshold (default: 0.2)")
    parser.add_argument("--scorer", choices=("article", "bm25"), default="article",
                        help="score as the agent does: the store does not record it (default: article, the "
                             "manager's; bm25 for an agent opened with scorer='bm25')")
    parser.add_argument("--json", action="store_true", help="print every candidate's admission as JSON")


def _recall(args: argparse.Namespace) -> int:
    with open_store_dir(store_file(args.store), scorer=args.scorer) as opened:
        explanation = recall(opened, args.query, args.user_id, tenant_id=args.tenant_id, top_k=args.top_k,
                             threshold=args.threshold, session_id=args.session_id, task_id=args.task_id)
    if args.json:
        print(json.dumps(explanation.to_dict(), ensure_ascii=False, indent=2))
    else:
        rows = [[str(a.record_id), "admitted" if a.admitted else "rejected", f"{a.relevance:.3f}", f"{a.weight:.2f}",
                 clip(", ".join(a.reasons), 32), clip(f"{a.record.get('role')}: {a.record.get('content')}", 48)]
                for a in explanation]
        print(escape(f"query {args.query!r} for user {args.user_id!r}: {len(explanation.admitted)} admitted, "
                     f"{len(explanation.rejected)} rejected (threshold {args.threshold})"))
        if rows:
            print("\n".join(format_table(["record", "verdict", "relevance", "weight", "reasons", "memory"], rows,
                                         "rlrrll")))
    return 0 if explanation.admitted else NOTHING_FOUND


# -- export ---------------------------------------------------------------------------------------

def _export_arguments(parser: argparse.ArgumentParser) -> None:
    _scope_arguments(parser)
    parser.add_argument("--out", metavar="FILE", help="write the JSON Lines here (default: standard output)")
    parser.add_argument("--json", action="store_true", help="with --out, print the receipt as JSON (the export "
                                                            "itself is always JSON Lines)")


def _export(args: argparse.Namespace) -> int:
    with open_store_dir(store_file(args.store)) as opened:
        lines = list(export_user(opened, args.user_id, tenant_id=args.tenant_id))
    receipt: dict[str, Any] = json.loads(lines[-1])
    if not receipt["records"] and not receipt["facts"]:
        print(escape(f"no memory of user {args.user_id!r} in this store; nothing was exported"), file=sys.stderr)
        return NOTHING_FOUND
    data = ("\n".join(lines) + "\n").encode("ascii")  # the receipt's bytes, on every platform
    if args.out is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
    else:
        out = Path(args.out)
        try:  # created new and private (the user's data), never over an existing file
            handle = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        except FileExistsError:
            raise ValueError(f"file {out} already exists; export never overwrites a file") from None
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        if args.json:
            print(json.dumps(receipt))
            return 0
        print(escape(f"exported {receipt['records']} record(s) and {receipt['facts']} fact(s) of user "
                     f"{args.user_id!r} to {out} (sha256 {receipt['sha256'][:16]}…)"))
    return 0


# name -> (help, example, add_arguments, run)
MEMORY_COMMANDS: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "users": ("List the users a store remembers, with their record counts (exit 3: none).",
              "python -m v2_memory users --store v2_memory", _users_arguments, _users),
    "recall": ("Show what a user's memory would admit for a query, every candidate with its verdict; read-only "
               "(exit 3: nothing admitted).", "python -m v2_memory recall --store v2_memory default '记忆污染 阈值'",
               _recall_arguments, _recall),
    "export": ("Export a user's memory as JSON Lines (records, governance, facts, a receipt with a sha256); "
               "read-only (exit 3: no such user).", "python -m v2_memory export --store v2_memory guest --out guest.jsonl",
               _export_arguments, _export),
}
