"""`history_search` over a large store through the core API, against raw FTS5 in the same run.

The corpus: one workspace, one run, and N messages (default 1,000,000) in the run's thread,
indexed exactly as the product indexes them (`messages`, `history_entries`, `history_text`, the
history state's last entry ID), built in bulk with sqlite3 through the same schema (the store's
own migrations made it) and cached under the temp directory (`rutter-bench-history/`), so
later runs start at once. Each text is a few words from a small vocabulary with code
identifiers, Chinese and Japanese, so queries hit from a handful of messages to most of them.

Timed, per query of a fixed list, `rounds` times each:
- API: `Rutter.history.search(HistorySearchParams(query, run_id, limit=20))`: params, the
  run's visibility (its workspace and lineage), the keyset query joined to the entries, the
  signed handles and cursor, the snippets.
- baseline: raw sqlite3 on the same file: `SELECT rowid, body FROM history_text WHERE
  history_text MATCH ? ORDER BY rowid DESC LIMIT 21`.
Also: a 2-character query (the bounded scan), and what keeping a memory body out of the index
costs: disabling one memory among `--memories` active ones (the compaction of the memory index
plus the purge), against creating one.

Prints median and p95 (ms) for each side, their ratio, and the goal (issue 16: p95 <= 20 ms
over 1,000,000 messages), with the machine's load average.

Usage: python benchmarks/history.py [--messages 1000000] [--rounds 20] [--memories 1000]
       [--per-query]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.memory import CreateMemoryParams, SetMemoryStatusParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.ids import new_id
from rutter_core.store import MIGRATIONS, migration_checksum, open_store

WORDS = (
    "parser", "lexer", "token", "buffer", "stream", "review", "commit", "branch", "fixture",
    "refactor", "deadline", "latency", "release", "rollback", "schema", "migration", "index",
    "cursor", "handle", "snapshot", "删除后不可恢复", "配置文件", "设定を読む", "テスト",
    "parse_input_stream", "read_config", "HttpClient", "retry_after", "max_depth", "TODO",
)  # fmt: skip
QUERIES = (
    "parse_input_stream", "input_stream", "不可恢复", "を読む", "テスト", "HttpClient", "rollback",
    "retry_after", "max_depth", "migration index", "nothing-matches-this", "Deadline",
    "stream", "config",
)  # fmt: skip
"""Short (2-character) queries go through the bounded scan: timed apart."""
SHORT = ("设定", "テス", "ab")


def _text(rng: random.Random, n: int) -> str:
    return f"{n}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10)))


def build(path: Path, messages: int) -> tuple[str, str]:
    """A store with `messages` indexed messages in one run's thread; (run ID, thread ID)."""
    root = path.parent / "workspace"
    root.mkdir(parents=True, exist_ok=True)
    (root / "AGENTS.md").write_text("rules\n")
    with open_store(f"sqlite:///{path}") as store:
        app = Rutter(store)
        app.workspaces.register(
            RegisterWorkspaceParams(workspace_id="bench", root=str(root), cwd="/")
        )
        run = app.runs.create(
            CreateRunParams(goal="bench", workspace_id="bench", target=".", mode="auto"),
            actor="cli",
        )
    rng = random.Random(16)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN IMMEDIATE")
        last = int(conn.execute("SELECT last_entry_id FROM history_state").fetchone()[0])
        batch = 20_000
        for start in range(0, messages, batch):
            rows = []
            for n in range(start, min(messages, start + batch)):
                rows.append((new_id("msg"), n + 1, _text(rng, n), last + n + 1))
            conn.executemany(
                "INSERT INTO messages (message_id, thread_id, seq, role, text, redacted, source,"
                " external_id, created_at) VALUES (?, ?, ?, 'user', ?, 0, 'cli', NULL,"
                " '2026-01-01T00:00:00Z')",
                [(m, run.thread_id, seq, text) for m, seq, text, _ in rows],
            )
            conn.executemany(
                "INSERT INTO history_entries (entry_id, source_kind, source_id, owner_id,"
                " workspace_id, version, content_sha256, expires_at) VALUES"
                " (?, 'message', ?, ?, NULL, 1, ?, NULL)",
                [(entry, m, run.thread_id, "0" * 64) for m, _, _, entry in rows],
            )
            conn.executemany(
                "INSERT INTO history_text (rowid, body) VALUES (?, ?)",
                [(entry, text) for _, _, text, entry in rows],
            )
        # Everything is indexed here: no backfill is pending.
        conn.execute(
            "UPDATE history_state SET last_entry_id = ?, backfill_pending = 0", (last + messages,)
        )
        conn.execute("INSERT INTO history_text (history_text) VALUES ('optimize')")
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return run.run_id, run.thread_id


def corpus(messages: int) -> tuple[Path, str]:
    """The cached corpus of `messages` messages (built once); its file and run ID."""
    schema = migration_checksum(MIGRATIONS[-1], "sqlite")[:12]  # a new schema: a new corpus
    directory = Path(tempfile.gettempdir()) / "rutter-bench-history" / f"m{messages}-{schema}"
    path = directory / "rutter.db"
    marker = directory / "run_id"
    if not marker.exists():
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("rutter.db*"):
            stale.unlink()
        began = time.perf_counter()
        run_id, _ = build(path, messages)
        print(f"built {messages} messages in {time.perf_counter() - began:.0f} s: {path}")
        marker.write_text(run_id)
    return path, marker.read_text()


def timed(call: Callable[[], object], rounds: int) -> list[float]:
    call()  # warm
    spent = []
    for _ in range(rounds):
        began = time.perf_counter()
        call()
        spent.append((time.perf_counter() - began) * 1000)
    return spent


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def compaction_cost(memories: int, rounds: int) -> tuple[list[float], list[float]]:
    """ms to disable one memory among `memories` active ones, and to create one."""
    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/m.db") as store:
        app = Rutter(store)
        made = [
            app.memory.create(
                CreateMemoryParams(scope="user", title=f"m{n}", content=f"memory {n} " * 20),
                actor="cli",
            )
            for n in range(memories)
        ]
        disable, create = [], []
        for n in range(rounds):
            began = time.perf_counter()
            app.memory.set_status(
                SetMemoryStatusParams(id=made[n].memory_id, version=1, status="disabled"),
                actor="cli",
            )
            disable.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            app.memory.create(
                CreateMemoryParams(scope="user", title="new", content=f"another {n} " * 20),
                actor="cli",
            )
            create.append((time.perf_counter() - began) * 1000)
    return disable, create


def _raw_search(raw: sqlite3.Connection, phrase: str) -> list[object]:
    return raw.execute(
        "SELECT rowid, body FROM history_text WHERE history_text MATCH ? "
        "ORDER BY rowid DESC LIMIT 21",
        (phrase,),
    ).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--per-query", action="store_true", help="median / p95 of each query")
    args = parser.parse_args()
    path, run_id = corpus(args.messages)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.messages} messages; "
          f"{len(QUERIES)} queries x {args.rounds} rounds")  # fmt: skip
    raw = sqlite3.connect(path, isolation_level=None)
    api_all: list[float] = []
    raw_all: list[float] = []
    with open_store(f"sqlite:///{path}") as store:
        app = Rutter(store)
        for query in QUERIES:
            params = HistorySearchParams(query=query, run_id=run_id, limit=20)
            phrase = '"' + query.replace('"', '""') + '"'
            api = timed(functools.partial(app.history.search, params), args.rounds)
            base = timed(functools.partial(_raw_search, raw, phrase), args.rounds)
            api_all += api
            raw_all += base
            if args.per_query:
                print(f"  {query!r:<24} API {statistics.median(api):6.2f} / {p95(api):6.2f} ms"
                      f"  raw {statistics.median(base):6.2f} / {p95(base):6.2f} ms")  # fmt: skip
        short: list[float] = []
        for query in SHORT:
            params = HistorySearchParams(query=query, run_id=run_id, limit=20)
            short += timed(functools.partial(app.history.search, params), args.rounds)
    raw.close()
    print(f"{'':<28} {'median ms':>9} {'p95 ms':>7}")
    print(f"{'history_search (API)':<28} {statistics.median(api_all):>9.2f} {p95(api_all):>7.2f}")
    print(f"{'raw FTS5 MATCH (baseline)':<28} {statistics.median(raw_all):>9.2f} "
          f"{p95(raw_all):>7.2f}")  # fmt: skip
    print(f"{'ratio API / raw':<28} {statistics.median(api_all) / statistics.median(raw_all):>9.2f}"
          f" {p95(api_all) / p95(raw_all):>7.2f}")  # fmt: skip
    print(f"goal: history_search p95 <= 20 ms over 1,000,000 messages: "
          f"{'met' if p95(api_all) <= 20 else 'NOT met'} ({p95(api_all):.2f} ms)")  # fmt: skip
    print(
        f"{'2-char query (bounded scan)':<28} {statistics.median(short):>9.2f} {p95(short):>7.2f}"
    )
    disable, create = compaction_cost(args.memories, args.rounds)
    print(f"{f'disable 1 of {args.memories} memories':<28} {statistics.median(disable):>9.2f} "
          f"{p95(disable):>7.2f}  (compaction + purge)")  # fmt: skip
    print(f"{'create 1 memory':<28} {statistics.median(create):>9.2f} {p95(create):>7.2f}")


if __name__ == "__main__":
    main()
