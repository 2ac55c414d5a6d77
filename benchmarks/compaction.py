"""Compacting a thread of 10,000 messages with the extractive summarizer, and assembling the
context of a run resumed from its checkpoint, each through the core API against raw sqlite3 on
the same rows, in the same run.

The store holds a workspace (an AGENTS.md), one run with 3 pins, and its thread of 10,000
messages (the person's requests, tool calls, tool results of about 1 KB, replies) plus 20
decision and summary notes. A compaction is the whole operation as `rutter session compact`
does it: the write that checks the operation key and the thread, counts the messages since the
previous compaction, reads the 4 kept and, newest first, the older ones while they fit the
24,000-token input window, and stores the operation `running` with its digests; the extractive
summary; the write that checks the thread is unchanged and stores summary and range together.
Each round compacts a fresh copy of the prepared store (a compaction covers the thread, so the
next one would have nothing to do). Its baseline reads the same rows by hand: the count, the
newest 4, the older messages newest first until the same window, the notes, in one transaction.

The resumed run's assembly is `context assemble` of a run resumed from a checkpoint taken after
the compaction: instructions, the task's pins, the checkpoint's summary, its carried messages,
the memories (none), planned and audited. Its baseline reads the run, its pinned snapshot, its
branch marker and the checkpoint's snapshot JSON, the pins of both threads, the compaction row
and the new thread's messages, in one transaction.

Usage: python benchmarks/compaction.py [--rounds 5] [--ops 100]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from rutter_core.app.assembly import AssembleParams
from rutter_core.app.branches import ResumeParams
from rutter_core.app.compaction import CompactParams
from rutter_core.app.continuity import AddNoteParams, CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import AddPinParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.continuity import repo
from rutter_core.continuity.model import Role
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.ids import new_id
from rutter_core.store import open_store

MESSAGES = 10_000
WINDOW = 24_000
RESULT = "collected 212 items; 211 passed, 1 failed: test_parse_nested_quotes\n" * 14


def prepare(scratch: Path) -> tuple[Path, str]:
    root = scratch / "repo"
    root.mkdir()
    (root / "AGENTS.md").write_text("Run `make test` before every commit.\n" * 20)
    path = scratch / "rutter.db"
    with open_store(f"sqlite:///{path}") as store:
        rutter = Rutter(store)
        rutter.workspaces.register(
            RegisterWorkspaceParams(workspace_id="demo", root=str(root), cwd="/")
        )
        run = rutter.runs.create(CreateRunParams(goal="bench", workspace_id="demo"), actor="cli")
        for n in range(3):
            rutter.pins.add(
                AddPinParams(thread_id=run.thread_id, text=f"pin {n}: stay on main"), actor="cli"
            )
        for n in range(20):
            rutter.continuity.add_note(
                AddNoteParams(thread_id=run.thread_id, kind="decision" if n % 2 else "summary",
                              text=f"note {n}: the parser keeps a table of states"),
                actor="cli",
            )  # fmt: skip
        now = now_rfc3339()
        with store.write() as conn:
            for seq in range(1, MESSAGES + 1):
                turns: list[tuple[Role, str]] = [
                    ("user", f"please fix parser case {seq}"),
                    ("assistant", f'[tool call pytest call-{seq}]\n{{"k": "{seq}"}}'),
                    ("tool", f"[tool result call-{seq - 1}]\n{RESULT}"),
                    ("assistant", f"fixed case {seq}"),
                ]
                role, text = turns[(seq - 1) % 4]
                repo.insert_message(
                    conn, message_id=new_id("msg"), thread_id=run.thread_id, seq=seq,
                    role=role, text=text, redacted=False, source="cli", external_id=None,
                    now=now,
                )  # fmt: skip
    return path, run.thread_id


def raw_compaction_reads(path: Path, thread_id: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("SELECT count(*) FROM messages WHERE thread_id = ? AND seq > 0", (thread_id,))
    conn.execute(
        "SELECT message_id, seq, text FROM messages WHERE thread_id = ? ORDER BY seq DESC LIMIT 4",
        (thread_id,),
    ).fetchall()
    left = WINDOW
    for _message_id, text in conn.execute(
        "SELECT message_id, text FROM messages WHERE thread_id = ? AND seq <= ? ORDER BY seq DESC",
        (thread_id, MESSAGES - 4),
    ):
        left -= (len(text) + 3) // 4 + 4
        if left < 0:
            break
    conn.execute("SELECT * FROM notes WHERE thread_id = ? AND status = 'active'", (thread_id,))
    conn.execute("ROLLBACK")
    conn.close()


def raw_assembly_reads(path: Path, run_id: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    run = conn.execute(
        "SELECT run_id, thread_id, workspace_id FROM runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    conn.execute(
        "SELECT snapshot_json FROM run_instruction_snapshots WHERE run_id = ? "
        "ORDER BY revision DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    marker = conn.execute(
        "SELECT parent_node_id FROM continuity_nodes WHERE run_id = ? AND kind = 'resume'",
        (run_id,),
    ).fetchone()
    source = conn.execute(
        "SELECT n.thread_id, s.snapshot_json FROM continuity_nodes n JOIN continuity_snapshots s "
        "ON s.node_id = n.node_id WHERE n.node_id = ?",
        (marker[0],),
    ).fetchone()
    for thread in (run[1], source[0]):
        conn.execute("SELECT pin_id, version, text FROM pins WHERE thread_id = ?", (thread,))
    conn.execute(
        "SELECT * FROM compactions WHERE thread_id = ? AND status = 'completed'", (source[0],)
    ).fetchall()
    conn.execute(
        "SELECT * FROM messages WHERE thread_id = ? ORDER BY seq DESC LIMIT 200", (run[1],)
    ).fetchall()
    conn.execute("ROLLBACK")
    conn.close()


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="compactions (fresh copies)")
    parser.add_argument("--ops", type=int, default=100, help="assemblies per round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        prepared, thread_id = prepare(Path(scratch))
        compact: list[float] = []
        compact_raw: list[float] = []
        summary = None
        for round_number in range(args.rounds):
            copy = Path(scratch) / f"copy{round_number}.db"
            shutil.copyfile(prepared, copy)
            rutter = Rutter(open_store(f"sqlite:///{copy}"))
            start = time.perf_counter()
            summary = rutter.compaction.compact(CompactParams(thread_id=thread_id), actor="cli")
            compact.append(ms(start))
            start = time.perf_counter()
            raw_compaction_reads(copy, thread_id)
            compact_raw.append(ms(start))
        assert summary is not None
        rutter = Rutter(open_store(f"sqlite:///{copy}"))
        with rutter.store.read() as conn:
            owner = conn.exec_driver_sql(
                "SELECT run_id FROM runs WHERE thread_id = ?", (thread_id,)
            ).scalar_one()
        node = rutter.continuity.checkpoint(
            CheckpointParams(run_id=str(owner), title="bench"), actor="cli"
        )
        resumed = rutter.branches.resume(ResumeParams(node_id=node.node_id), actor="cli")
        params = AssembleParams(run_id=resumed.run_id)
        sample = rutter.assembly.assemble(params, actor="cli")
        assemble: list[float] = []
        assemble_raw: list[float] = []
        for _ in range(args.rounds):
            for _ in range(args.ops):
                start = time.perf_counter()
                rutter.assembly.assemble(params, actor="cli")
                assemble.append(ms(start))
            for _ in range(args.ops):
                start = time.perf_counter()
                raw_assembly_reads(copy, resumed.run_id)
                assemble_raw.append(ms(start))
        kinds = [e.kind for e in sample.entries if e.decision == "included"]
        print(
            f"load average {os.getloadavg()[0]:.2f}; {MESSAGES} messages; compaction: "
            f"{summary.compacted_message_count} summarized, {summary.unread_message_count} "
            f"unread, summary {summary.summary.tokens if summary.summary else 0} tokens; "
            f"resumed assembly: {len(kinds)} included ({', '.join(sorted(set(kinds)))}), "
            f"{sample.budget.used} tokens"
        )
        print(f"{'':<22} {'median ms':>10} {'p95 ms':>8}")
        for name, mine, base in (
            ("compaction", compact, compact_raw),
            ("resumed assembly", assemble, assemble_raw),
        ):
            print(f"{name + ' API':<22} {statistics.median(mine):>10.2f} {p95(mine):>8.2f}")
            print(f"{name + ' raw':<22} {statistics.median(base):>10.2f} {p95(base):>8.2f}")
            ratio = statistics.median(mine) / statistics.median(base)
            print(f"{'':<22} ratio (median): {ratio:.1f}x")


if __name__ == "__main__":
    main()
