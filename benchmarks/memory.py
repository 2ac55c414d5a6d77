"""Memory writes and lists through the core API against raw sqlite3, in the same run.

Two baselines, each Python's sqlite3 on a store of its own migrated the same way (same schema,
WAL, `secure_delete`, `busy_timeout`, `foreign_keys`), doing the same statements by hand, each
operation in its own `BEGIN IMMEDIATE` / `BEGIN` transaction:

- `raw` (the baseline of the earlier runs): one INSERT into `memories` per create, one guarded
  UPDATE per edit, one SELECT of 100 rows per list;
- `raw+index` (since the schema holds the history index, issue 16): the same, plus what keeps
  a memory searchable: a create also takes an entry ID and inserts the entry and its text into
  the memory index (its shard), an edit also updates the entry and replaces its text there.

Neither purges. The API adds what the product needs: params validation, text checks and
secret scanning, the version guard, the record models, and for an edit that replaces a body
(and every delete) the purge that leaves no prior body in the database, WAL or SHM files (the
index shard that held it rewritten, then a truncating WAL checkpoint).

Prints ops/s (median of rounds) for create, edit, list(100) and a mix (create, edit, list in
turn), each against both baselines and the goal (issue 12: >= 0.5x each, >= 2,000 ops/s
mixed).

Usage: python benchmarks/memory.py [--ops 300] [--rounds 5]
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

from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, EditMemoryParams, ListMemoriesParams
from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.kernel.ids import new_id
from rutter_core.store import open_store
from rutter_core.store.schema import memory_text_shards

BODY = "Prefer table-driven tests; keep fixtures next to the test that uses them. " * 4


def raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA secure_delete = ON")
    return conn


class Raw:
    """The same statements by hand (`indexed`: with the history index's too)."""

    def __init__(self, path: Path, *, indexed: bool = False) -> None:
        self.conn = raw_connection(path)
        self.indexed = indexed
        self.ids: list[str] = []
        self.versions: dict[str, int] = {}
        self.turn = 0

    def create(self) -> None:
        now = rfc3339(utc_now())
        memory_id = new_id("mem")
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(
            "INSERT INTO memories (memory_id, scope, scope_id, workspace_id, title, content, "
            "content_sha256, status, source_kind, references_json, retention_until, redacted, "
            "created_by, updated_by, version, created_at, updated_at) VALUES "
            "(?, 'user', 'local-user', NULL, ?, ?, ?, 'active', 'operator_explicit', '[]', NULL,"
            " 0, 'cli', 'cli', 1, ?, ?)",
            (memory_id, "title", BODY, "0" * 64, now, now),
        )
        if self.indexed:
            (entry_id,) = self.conn.execute(
                "UPDATE history_state SET last_entry_id = last_entry_id + 1 RETURNING last_entry_id"
            ).fetchone()
            self.conn.execute(
                "INSERT INTO history_entries (entry_id, source_kind, source_id, owner_id, "
                "workspace_id, version, content_sha256, expires_at) "
                "VALUES (?, 'memory', ?, 'local-user', NULL, 1, ?, NULL)",
                (entry_id, memory_id, "2" * 64),
            )
            self.conn.execute(
                f"INSERT INTO {_shard(entry_id)} (rowid, body) VALUES (?, ?)",
                (entry_id, f"title\n{BODY}"),
            )
        self.conn.execute("COMMIT")
        self.ids.append(memory_id)
        self.versions[memory_id] = 1

    def edit(self) -> None:
        self.turn += 1
        memory_id = self.ids[self.turn % len(self.ids)]
        version = self.versions[memory_id]
        self.conn.execute("BEGIN IMMEDIATE")
        done = self.conn.execute(
            "UPDATE memories SET content = ?, content_sha256 = ?, version = ?, updated_at = ? "
            "WHERE memory_id = ? AND version = ?",
            (f"{BODY}{self.turn}", "1" * 64, version + 1, rfc3339(utc_now()), memory_id, version),
        )
        assert done.rowcount == 1
        if self.indexed:
            (entry_id,) = self.conn.execute(
                "SELECT entry_id FROM history_entries WHERE source_id = ?", (memory_id,)
            ).fetchone()
            self.conn.execute(
                "UPDATE history_entries SET version = ?, content_sha256 = ? WHERE entry_id = ?",
                (version + 1, "3" * 64, entry_id),
            )
            self.conn.execute(f"DELETE FROM {_shard(entry_id)} WHERE rowid = ?", (entry_id,))
            self.conn.execute(
                f"INSERT INTO {_shard(entry_id)} (rowid, body) VALUES (?, ?)",
                (entry_id, f"title\n{BODY}{self.turn}"),
            )
        self.conn.execute("COMMIT")
        self.versions[memory_id] = version + 1

    def list(self) -> None:
        self.conn.execute("BEGIN")
        rows = self.conn.execute(
            "SELECT * FROM memories WHERE status = 'active' AND scope = 'user' "
            "ORDER BY updated_at DESC, memory_id DESC LIMIT 101"
        ).fetchall()
        self.conn.execute("COMMIT")
        assert rows


def _shard(entry_id: int) -> str:
    return memory_text_shards[entry_id % len(memory_text_shards)]


class Api:
    """The app facade, as every surface calls it."""

    def __init__(self, path: Path) -> None:
        self.rutter = Rutter(open_store(f"sqlite:///{path}"))
        self.ids: list[str] = []
        self.versions: dict[str, int] = {}
        self.turn = 0

    def create(self) -> None:
        params = CreateMemoryParams(scope="user", title="title", content=BODY)
        record = self.rutter.memory.create(params, actor="cli")
        self.ids.append(record.memory_id)
        self.versions[record.memory_id] = record.version

    def edit(self) -> None:
        self.turn += 1
        memory_id = self.ids[self.turn % len(self.ids)]
        params = EditMemoryParams(
            id=memory_id, version=self.versions[memory_id], content=f"{BODY}{self.turn}"
        )
        self.versions[memory_id] = self.rutter.memory.edit(params, actor="cli").version

    def list(self) -> None:
        found = self.rutter.memory.list(ListMemoriesParams(scope="user", limit=100))
        assert found.items


def ops_per_second(operation: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        operation()
    return count / (time.perf_counter() - start)


def mixed(target: Raw | Api) -> Callable[[], None]:
    steps = (target.create, target.edit, target.list)
    state = [0]

    def step() -> None:
        steps[state[0] % 3]()
        state[0] += 1

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=300, help="operations per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        api = Api(Path(scratch, "api.db"))
        raw_path, indexed_path = Path(scratch, "raw.db"), Path(scratch, "indexed.db")
        for path in (raw_path, indexed_path):
            open_store(f"sqlite:///{path}").close()  # the same schema, migrated the same way
        raw, indexed = Raw(raw_path), Raw(indexed_path, indexed=True)
        figures: dict[str, tuple[list[float], list[float], list[float]]] = {
            name: ([], [], []) for name in ("create", "edit", "list(100)", "mixed")
        }
        for _ in range(args.rounds):  # interleaved, so both see the same machine
            for name, pick in (
                ("create", lambda t: t.create),
                ("edit", lambda t: t.edit),
                ("list(100)", lambda t: t.list),
                ("mixed", mixed),
            ):
                targets: tuple[Raw | Api, ...] = (api, raw, indexed)
                for rates, target in zip(figures[name], targets, strict=True):
                    rates.append(ops_per_second(pick(target), args.ops))
        print(f"load average {os.getloadavg()[0]:.2f}; {args.ops} ops x {args.rounds} rounds")
        print(
            f"{'operation':<10} {'API ops/s':>10} {'raw ops/s':>10} {'ratio':>6} "
            f"{'raw+index':>10} {'ratio':>6}  goal"
        )
        for name, (api_rates, raw_rates, indexed_rates) in figures.items():
            mine, base, base_indexed = (
                statistics.median(rates) for rates in (api_rates, raw_rates, indexed_rates)
            )
            goal = ">= 0.5x" + (" and >= 2000 ops/s" if name == "mixed" else "")
            print(
                f"{name:<10} {mine:>10.0f} {base:>10.0f} {mine / base:>6.2f} "
                f"{base_indexed:>10.0f} {mine / base_indexed:>6.2f}  {goal}"
            )


if __name__ == "__main__":
    main()
