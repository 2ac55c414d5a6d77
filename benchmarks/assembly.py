"""Context assembly with 200 memories through the core API against raw sqlite3, in the same run.

The store holds a workspace whose root has an AGENTS.md and a CLAUDE.md, one run (pinned
instructions, revision 1), 3 pins on its thread, and 200 active memories: 100 of the local user
and 100 of the workspace (about 300 characters each, so the 2048-token memory sub-budget takes
some and omits the rest by `quota`). One assembly, as `rutter context assemble` does it: one
write transaction that reads the run and its pinned revision (verified against its
fingerprint), the pins and both scopes' memories (active ones with bodies, inactive ones and the
totals), redacts and estimates every text, plans the budget and appends the audit row.

The baseline is Python's sqlite3 on the same store reading the same rows by hand in one
`BEGIN IMMEDIATE` transaction (the run, its latest revision's snapshot JSON, the pins, each
scope's first 100 active memories with their bodies, the inactive ones and the counts) and
rolling back: the floor of the reads, with no validation, redaction, estimate, plan or write.

Prints the median and p95 time of one assembly (ms), the baseline's, the ratio, and the load
average.

Usage: python benchmarks/assembly.py [--ops 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rutter_core.app.assembly import AssembleParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams
from rutter_core.app.pins import AddPinParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.store import open_store

BODY = (
    "Prefer table-driven tests; keep fixtures next to the test that uses them. "
    "Run the linters before pushing; never commit generated files. 不要提交生成的文件。 "
)


def prepare(scratch: Path) -> tuple[Path, str]:
    root = scratch / "repo"
    root.mkdir()
    (root / "AGENTS.md").write_text("Run `make test` before every commit.\n" * 20)
    (root / "CLAUDE.md").write_text("Answer in English; keep diffs small.\n" * 10)
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
        for n in range(200):
            scope = "user" if n % 2 == 0 else "project"
            rutter.memory.create(
                CreateMemoryParams(
                    scope=scope,
                    workspace_id="demo" if scope == "project" else None,
                    title=f"memory {n}",
                    content=f"{n}: {BODY}",
                ),
                actor="cli",
            )
    return path, run.run_id


class Raw:
    def __init__(self, path: Path, run_id: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 5000")
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.run_id = run_id

    def assemble(self) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        run = conn.execute(
            "SELECT run_id, thread_id, workspace_id, target_path FROM runs WHERE run_id = ?",
            (self.run_id,),
        ).fetchone()
        snapshot = conn.execute(
            "SELECT snapshot_json, fingerprint FROM run_instruction_snapshots WHERE run_id = ? "
            "ORDER BY revision DESC LIMIT 1",
            (self.run_id,),
        ).fetchone()
        pins = conn.execute(
            "SELECT pin_id, version, text FROM pins WHERE thread_id = ? ORDER BY created_at",
            (run[1],),
        ).fetchall()
        rows = 0
        for scope, scope_id in (("user", "local-user"), ("project", run[2])):
            rows += len(
                conn.execute(
                    "SELECT memory_id, version, content_sha256, content FROM memories "
                    "WHERE scope = ? AND scope_id = ? AND status = 'active' AND "
                    "(retention_until IS NULL OR retention_until > ?) ORDER BY memory_id "
                    "LIMIT 100",
                    (scope, scope_id, "2026-12-03T00:00:00Z"),
                ).fetchall()
            )
            conn.execute(
                "SELECT memory_id, version, content_sha256 FROM memories WHERE scope = ? AND "
                "scope_id = ? AND NOT (status = 'active' AND (retention_until IS NULL OR "
                "retention_until > ?)) ORDER BY memory_id LIMIT 100",
                (scope, scope_id, "2026-12-03T00:00:00Z"),
            ).fetchall()
            conn.execute(
                "SELECT count(*) FROM memories WHERE scope = ? AND scope_id = ?",
                (scope, scope_id),
            ).fetchone()
        conn.execute("ROLLBACK")
        assert snapshot is not None
        assert (len(pins), rows) == (3, 200)


def timed(operation: Callable[[], object], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        operation()
        times.append((time.perf_counter() - start) * 1000)
    return times


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=200, help="assemblies per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path, run_id = prepare(Path(scratch))
        rutter = Rutter(open_store(f"sqlite:///{path}"))
        raw = Raw(path, run_id)
        params = AssembleParams(run_id=run_id)
        sample = rutter.assembly.assemble(params, actor="cli")
        included = sum(1 for e in sample.entries if e.decision == "included")
        api_times: list[float] = []
        raw_times: list[float] = []
        for _ in range(args.rounds):  # interleaved, so both see the same machine
            api_times += timed(lambda: rutter.assembly.assemble(params, actor="cli"), args.ops)
            raw_times += timed(raw.assemble, args.ops)
        mine, base = statistics.median(api_times), statistics.median(raw_times)
        print(
            f"load average {os.getloadavg()[0]:.2f}; {args.ops} assemblies x {args.rounds} "
            f"rounds; {len(sample.entries)} sources, {included} included, "
            f"{sample.budget.used} of {sample.budget.background} tokens"
        )
        print(f"{'':<10} {'median ms':>10} {'p95 ms':>8}")
        print(f"{'API':<10} {mine:>10.2f} {p95(api_times):>8.2f}")
        print(f"{'raw reads':<10} {base:>10.2f} {p95(raw_times):>8.2f}")
        print(f"ratio (API / raw, median): {mine / base:.1f}x")


if __name__ == "__main__":
    main()
