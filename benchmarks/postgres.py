"""rutter on PostgreSQL against raw psycopg doing the same statements, in the same run.

A private PostgreSQL server is started for the run (`tests/postgres.py`: initdb into a temporary
directory, a Unix socket only, fsync on as on a real server), and stopped at the end. Four
parts (`--only` picks some):

- `memory`: create, edit and list(100) through the core API (`Rutter(open_store(url))` with a
  server's pool) against raw psycopg on a database of its own migrated the same way, each
  operation in its own transaction as the dialect begins it (READ COMMITTED plus the store's
  advisory write lock; a read REPEATABLE READ, READ ONLY): `raw` inserts or updates the memory
  row and its history index entry and text (the memory shard), `raw+purge` also runs what an
  edit that replaces a body must (`VACUUM (FULL)` of the store's tables, so the old body is in
  no table file). Ops/s, median of rounds.
- `history`: `history_search` p95 over N messages (default 1,000,000) in one run's thread,
  built with COPY into the product's tables (per-row triggers off for the loading session, the
  trigram index dropped during the load and built after), against raw psycopg sending the
  statements the search sends (the walk of the newest rows in key order, then the trigram
  index's statement below it; each phase joined to the entries with the same visibility), and
  the earlier runs' baseline, `SELECT entry_id, body FROM history_text WHERE body ILIKE ...
  ORDER BY entry_id DESC LIMIT 21` (`--index-only`: also both sides without the walk, as the
  search was before it). Checks that the API's hits are the raw side's. Prints the build time.
- `http`: `rutter http` with 1 and with 2 worker processes on the database, and on a SQLite
  file (`--engines`); GET one memory and a history search from 1 and from 4 client processes
  (each waiting for each answer over one keep-alive connection) for `--seconds` each, against
  raw psycopg (raw sqlite3) reading the same memory row from 1 and 4 processes. Goal: with 2
  workers on 2 cores, 4 clients get >= 1.8x the requests of one client.
- `acting`: what acting for a person costs (`Store.acting_as`: each transaction first takes the
  person's role, `SET LOCAL ROLE`, so row-level security holds it to that person's rows). A
  memory by ID and a list(20) of user memories through the core API on the store of a service
  role, as itself and acting for a person, against raw psycopg on a connection as the service
  role doing the same statements without and with the role change (median microseconds, per
  operation, interleaved rounds); then `rutter http` on that store, the same mix of requests
  (a memory by ID, a list(20), a history search) with a bearer of the service role itself and
  with a bearer of the person, taking turns request by request. Goal: over HTTP, a person's
  bearer costs at most 1.1x the service role's own.

Prints the load average before and after each part (the machine is shared).

Why one module: the four parts share one private server (started once: initdb and a durable
server cost seconds) and its helpers (migrated databases, the load average, percentiles).

Usage: python benchmarks/postgres.py [--only memory,history,http,acting] [--ops 200]
       [--rounds 5] [--messages 1000000] [--search-rounds 20] [--per-query] [--index-only]
       [--seconds 10] [--engines postgresql,sqlite]
"""

from __future__ import annotations

import os
import sys

# `benchmarks/http.py` is named like the standard library's `http`: run as a script, this
# directory comes first on sys.path and would shadow it. The repository root instead, for
# `tests.postgres` (the private server).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [os.path.dirname(_HERE)] + [
    p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE
]

import argparse
import functools
import http.client
import io
import json
import math
import multiprocessing
import random
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.memory import CreateMemoryParams, EditMemoryParams, ListMemoriesParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.tokens import CreateTokenParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.kernel.ids import new_id
from rutter_core.store import open_store
from rutter_core.store.dialects import postgresql as postgresql_dialect
from rutter_core.store.dialects.postgresql import (
    SEARCH_WALK_FIRST,
    SEARCH_WALK_MOST,
    WRITE_LOCK_KEY,
)
from rutter_core.store.schema import memory_text_shards
from tests.postgres import PostgresServer, start

BODY = "Prefer table-driven tests; keep fixtures next to the test that uses them. " * 4
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


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def conninfo(server: PostgresServer, database: str) -> dict[str, Any]:
    return {"host": str(server.socket_dir), "dbname": database, "user": server.superuser}


def migrated(server: PostgresServer) -> tuple[str, str]:
    """A new database with rutter's schema: (its name, its URL)."""
    database = server.create_database("rutter_bench")
    url = server.url(database)
    open_store(url).close()
    return database, url


# -- memory ------------------------------------------------------------------------------------


def _shard(entry_id: int) -> str:
    return memory_text_shards[entry_id % len(memory_text_shards)]


class Raw:
    """The statements of a create, an edit and a list, by hand (`purge`: and the edit's purge)."""

    def __init__(self, info: dict[str, Any], *, purge: bool) -> None:
        self.conn = psycopg.connect(**info, autocommit=True)
        self.purge = purge
        self.ids: list[str] = []
        self.versions: dict[str, int] = {}
        self.turn = 0
        tables = self.conn.execute(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() "
            "ORDER BY tablename"
        ).fetchall()
        self.tables = ", ".join(str(row[0]) for row in tables)

    def _write(self) -> None:
        self.conn.execute("BEGIN")
        self.conn.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
        self.conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")

    def create(self) -> None:
        now = rfc3339(utc_now())
        memory_id = new_id("mem")
        self._write()
        self.conn.execute(
            "INSERT INTO memories (memory_id, scope, scope_id, workspace_id, title, content, "
            "content_sha256, status, source_kind, references_json, retention_until, redacted, "
            "created_by, updated_by, version, created_at, updated_at) VALUES "
            "(%s, 'user', 'local-user', NULL, %s, %s, %s, 'active', 'operator_explicit', '[]', "
            "NULL, 0, 'cli', 'cli', 1, %s, %s)",
            (memory_id, "title", BODY, "0" * 64, now, now),
        )
        row = self.conn.execute(
            "UPDATE history_state SET last_entry_id = last_entry_id + 1 RETURNING last_entry_id"
        ).fetchone()
        assert row is not None
        entry_id = int(row[0])
        self.conn.execute(
            "INSERT INTO history_entries (entry_id, source_kind, source_id, owner_id, "
            "workspace_id, version, content_sha256, expires_at) "
            "VALUES (%s, 'memory', %s, 'local-user', NULL, 1, %s, NULL)",
            (entry_id, memory_id, "2" * 64),
        )
        self.conn.execute(
            f"INSERT INTO {_shard(entry_id)} (entry_id, body) VALUES (%s, %s)",
            (entry_id, f"title\n{BODY}"),
        )
        self.conn.execute("COMMIT")
        self.ids.append(memory_id)
        self.versions[memory_id] = 1

    def edit(self) -> None:
        self.turn += 1
        memory_id = self.ids[self.turn % len(self.ids)]
        version = self.versions[memory_id]
        self._write()
        done = self.conn.execute(
            "UPDATE memories SET content = %s, content_sha256 = %s, version = %s, "
            "updated_at = %s WHERE memory_id = %s AND version = %s",
            (f"{BODY}{self.turn}", "1" * 64, version + 1, rfc3339(utc_now()), memory_id, version),
        )
        assert done.rowcount == 1
        row = self.conn.execute(
            "SELECT entry_id FROM history_entries WHERE source_id = %s", (memory_id,)
        ).fetchone()
        assert row is not None
        entry_id = int(row[0])
        self.conn.execute(
            "UPDATE history_entries SET version = %s, content_sha256 = %s WHERE entry_id = %s",
            (version + 1, "3" * 64, entry_id),
        )
        shard = _shard(entry_id)
        self.conn.execute(f"DELETE FROM {shard} WHERE entry_id = %s", (entry_id,))
        self.conn.execute(
            f"INSERT INTO {shard} (entry_id, body) VALUES (%s, %s)",
            (entry_id, f"title\n{BODY}{self.turn}"),
        )
        self.conn.execute("COMMIT")
        if self.purge:
            self.conn.execute(f"VACUUM (FULL) {self.tables}")
        self.versions[memory_id] = version + 1

    def list(self) -> None:
        self.conn.execute("BEGIN")
        self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        rows = self.conn.execute(
            "SELECT * FROM memories WHERE status = 'active' AND scope = 'user' "
            "ORDER BY updated_at DESC, memory_id DESC LIMIT 101"
        ).fetchall()
        self.conn.execute("COMMIT")
        assert rows


class Api:
    """The app facade, as a long-lived server calls it."""

    def __init__(self, url: str) -> None:
        self.rutter = Rutter(open_store(url, pool="service"))
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
        assert self.rutter.memory.list(ListMemoriesParams(scope="user", limit=100)).items


def ops_per_second(operation: Callable[[], None], count: int) -> float:
    began = time.perf_counter()
    for _ in range(count):
        operation()
    return count / (time.perf_counter() - began)


def bench_memory(server: PostgresServer, ops: int, rounds: int) -> None:
    print(f"== memory: {ops} ops x {rounds} rounds (edits: {max(ops // 10, 5)}); load {load()}")
    _, api_url = migrated(server)
    raw_db, _ = migrated(server)
    purged_db, _ = migrated(server)
    api = Api(api_url)
    raw = Raw(conninfo(server, raw_db), purge=False)
    purged = Raw(conninfo(server, purged_db), purge=True)
    targets: tuple[Api | Raw, ...] = (api, raw, purged)
    names = ("create", "edit", "list(100)")
    figures: dict[str, list[list[float]]] = {name: [[], [], []] for name in names}
    for _ in range(rounds):  # interleaved, so each side sees the same machine
        for name in names:
            count = max(ops // 10, 5) if name == "edit" else ops
            for rates, target in zip(figures[name], targets, strict=True):
                operation = {"create": target.create, "edit": target.edit}.get(name, target.list)
                rates.append(ops_per_second(operation, count))
    print(f"{'operation':<10} {'API ops/s':>10} {'raw ops/s':>10} {'ratio':>6} "
          f"{'raw+purge':>10} {'ratio':>6}  goal")  # fmt: skip
    for name, (mine, base, base_purged) in figures.items():
        a, r, rp = (statistics.median(rates) for rates in (mine, base, base_purged))
        print(f"{name:<10} {a:>10.1f} {r:>10.1f} {a / r:>6.2f} {rp:>10.1f} {a / rp:>6.2f}"
              "  >= 0.5x the raw side doing the same work")  # fmt: skip
    api.rutter.store.close()
    raw.conn.close()
    purged.conn.close()
    print(f"load after {load()}")


# -- history -----------------------------------------------------------------------------------


def _copy_rows(
    rng: random.Random, start: int, stop: int, thread: str, first: int
) -> tuple[str, str, str]:
    messages, entries, texts = io.StringIO(), io.StringIO(), io.StringIO()
    for n in range(start, stop):
        text = f"{n}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10)))
        message = new_id("msg")
        entry = first + n
        messages.write(f"{message}\t{thread}\t{n + 1}\tuser\t{text}\t0\tcli\t\\N\t"
                       "2026-01-01T00:00:00Z\n")  # fmt: skip
        entries.write(f"{entry}\tmessage\t{message}\t{thread}\t\\N\t1\t{'0' * 64}\t\\N\n")
        texts.write(f"{entry}\t{text}\n")
    return messages.getvalue(), entries.getvalue(), texts.getvalue()


def build_history(server: PostgresServer, url: str, database: str, messages: int) -> str:
    """`messages` indexed messages in one run's thread, loaded with COPY; the run's ID."""
    root = Path(tempfile.mkdtemp(prefix="rutter-bench-ws-"))
    (root / "AGENTS.md").write_text("rules\n")
    with open_store(url) as store:
        app = Rutter(store)
        app.workspaces.register(
            RegisterWorkspaceParams(workspace_id="bench", root=str(root), cwd="/")
        )
        run = app.runs.create(
            CreateRunParams(goal="bench", workspace_id="bench", target=".", mode="auto"),
            actor="cli",
        )
    rng = random.Random(16)
    with psycopg.connect(**conninfo(server, database)) as conn:
        conn.execute("SET maintenance_work_mem = '256MB'")
        # A bulk load of rows made consistent here: the per-row triggers (the append-only key
        # guard, the references) are skipped for this session, as a restore does.
        conn.execute("SET session_replication_role = replica")
        row = conn.execute("SELECT last_entry_id FROM history_state").fetchone()
        assert row is not None
        first = int(row[0]) + 1
        conn.execute("DROP INDEX history_text_body_trigrams")
        batch = 50_000
        for start_at in range(0, messages, batch):
            rows = _copy_rows(rng, start_at, min(messages, start_at + batch), run.thread_id, first)
            for table, columns, data in zip(
                ("messages", "history_entries", "history_text"),
                (
                    "message_id, thread_id, seq, role, text, redacted, source, external_id, "
                    "created_at",
                    "entry_id, source_kind, source_id, owner_id, workspace_id, version, "
                    "content_sha256, expires_at",
                    "entry_id, body",
                ),
                rows,
                strict=True,
            ):
                with conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    copy.write(data)
        conn.execute(
            "CREATE INDEX history_text_body_trigrams ON history_text USING gin (body gin_trgm_ops)"
        )
        conn.execute(
            "UPDATE history_state SET last_entry_id = %s, backfill_pending = 0",
            (first + messages - 1,),
        )
        conn.commit()
    with psycopg.connect(**conninfo(server, database), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return run.run_id


def timed(call: Callable[[], object], rounds: int) -> list[float]:
    call()  # warm
    spent = []
    for _ in range(rounds):
        began = time.perf_counter()
        call()
        spent.append((time.perf_counter() - began) * 1000)
    return spent


THREAD_KINDS = ("note", "message", "receipt", "summary", "checkpoint")
ENTRY_COLUMNS = (
    "e.entry_id, e.source_kind, e.source_id, e.owner_id, e.workspace_id, e.version, "
    "e.content_sha256, e.expires_at"
)
VISIBLE = (
    "e.owner_id = ANY(%(owners)s) AND e.source_kind = ANY(%(kinds)s) "
    "AND (e.expires_at IS NULL OR e.expires_at > %(now)s) "
    "AND (CAST(%(person)s AS TEXT) IS NULL OR e.person IS NULL OR e.person = %(person)s)"
)


def _rows_sql(tables: tuple[str, ...], size: int, *, body: bool) -> str:
    arms = " UNION ALL ".join(
        f"SELECT entry_id{', body' if body else ''} FROM {table} "
        "WHERE entry_id < %(before)s AND entry_id <= %(horizon)s"
        for table in tables
    )
    return f"SELECT * FROM ({arms}) AS arms ORDER BY entry_id DESC LIMIT {size}"


def _walk_sql(tables: tuple[str, ...], size: int) -> str:
    """The walk: the newest `size` rows in key order, filtered; how many there were, the lowest
    key, and the first hits (the statement `history.repo` sends)."""
    return (
        "SELECT edge.examined, edge.lowest, hit.* FROM (SELECT count(*) AS examined, "
        f"min(keys.entry_id) AS lowest FROM ({_rows_sql(tables, size, body=False)}) AS keys) "
        f"AS edge LEFT JOIN (SELECT {ENTRY_COLUMNS}, walked.body FROM "
        f"({_rows_sql(tables, size, body=True)}) AS walked JOIN history_entries AS e "
        "ON e.entry_id = walked.entry_id WHERE walked.body ILIKE %(pattern)s ESCAPE '\\' "
        f"AND {VISIBLE} ORDER BY walked.entry_id DESC LIMIT %(limit)s) AS hit ON 1 = 1 "
        "ORDER BY hit.entry_id DESC"
    )


def _index_sql(tables: tuple[str, ...]) -> str:
    """The trigram index's statement for the rows below the walk (one arm per table)."""
    arms = [
        f"SELECT {table}.entry_id, {ENTRY_COLUMNS.partition(', ')[2]}, {table}.body "
        f"FROM {table} JOIN history_entries AS e ON e.entry_id = {table}.entry_id "
        f"WHERE {table}.body ILIKE %(pattern)s ESCAPE '\\' AND {table}.entry_id < %(before)s "
        f"AND {table}.entry_id <= %(horizon)s AND {VISIBLE}"
        for table in tables
    ]
    return f"{' UNION ALL '.join(arms)} ORDER BY 1 DESC LIMIT %(limit)s"


def _next_walk(found: int, walked: int, limit: int, most: int) -> int:
    if not found:
        return 0
    needed = 2 * (limit - found) * walked / found
    size = 1 << max(0, math.ceil(math.log2(max(needed, 1))))
    return size if walked + size <= most else 0


def _raw_phase(
    conn: psycopg.Connection[Any], tables: tuple[str, ...], values: dict[str, Any], *, walk: bool
) -> list[Any]:
    """One phase (memories, or the thread) as `history.repo.search` does it, by hand."""
    first, most = (SEARCH_WALK_FIRST, SEARCH_WALK_MOST) if walk else (0, 0)
    found: list[Any] = []
    values = dict(values)
    limit = values["limit"]
    size, walked = first, 0
    while size:
        rows = conn.execute(_walk_sql(tables, size), {**values, "limit": limit - len(found)})
        got = rows.fetchall()
        found += [row[2:] for row in got if row[2] is not None]
        if len(found) >= limit or got[0][0] < size:
            return found
        walked += got[0][0]
        values["before"] = got[0][1]
        size = _next_walk(len(found), walked, limit, most)
    rows = conn.execute(_index_sql(tables), {**values, "limit": limit - len(found)})
    return found + rows.fetchall()


def _raw_search(
    conn: psycopg.Connection[Any], query: str, thread_id: str, horizon: int, *, walk: bool
) -> list[Any]:  # the person: the connection's role, as rutter binds it
    """The statements of one history search (its memory phase, then the thread's), with the
    same values, in one read-only transaction."""
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    values = {
        "pattern": f"%{escaped}%", "before": horizon + 1, "horizon": horizon,
        "now": rfc3339(utc_now()), "person": conn.info.user, "limit": 21,
    }  # fmt: skip
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        hits = _raw_phase(
            conn, tuple(memory_text_shards),
            {**values, "owners": ["local-user", "bench"], "kinds": ["memory"]}, walk=walk,
        )  # fmt: skip
        if len(hits) < 21:
            hits += _raw_phase(
                conn, ("history_text",),
                {**values, "owners": [thread_id], "kinds": list(THREAD_KINDS),
                 "limit": 21 - len(hits)},
                walk=walk,
            )  # fmt: skip
        return hits


def _raw_single(conn: psycopg.Connection[Any], query: str) -> list[Any]:
    """The baseline of the earlier runs: one statement on the text table alone."""
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return conn.execute(
            "SELECT entry_id, body FROM history_text WHERE body ILIKE %s ESCAPE '\\' "
            "ORDER BY entry_id DESC LIMIT 21",
            (f"%{escaped}%",),
        ).fetchall()


def bench_history(
    server: PostgresServer, messages: int, rounds: int, per_query: bool, index_only: bool
) -> None:
    print(f"== history: {messages} messages; load {load()}")
    database, url = migrated(server)
    began = time.perf_counter()
    run_id = build_history(server, url, database, messages)
    print(f"built {messages} messages (COPY, then the trigram index) in "
          f"{time.perf_counter() - began:.0f} s; load {load()}")  # fmt: skip
    sides: tuple[str, ...] = ("API", "raw", "raw single")
    if index_only:
        sides += ("API index only", "raw index only")
    figures: dict[str, list[float]] = {side: [] for side in sides}
    with (
        open_store(url, pool="service") as store,
        psycopg.connect(**conninfo(server, database)) as raw,
    ):
        app = Rutter(store)
        with store.read() as conn:
            thread_id, horizon = conn.exec_driver_sql(
                "SELECT thread_id, (SELECT last_entry_id FROM history_state) FROM runs "
                f"WHERE run_id = '{run_id}'"
            ).one()
        for query in QUERIES:
            params = HistorySearchParams(query=query, run_id=run_id, limit=20)
            calls: dict[str, Callable[[], object]] = {
                "API": functools.partial(app.history.search, params),
                "raw": functools.partial(_raw_search, raw, query, thread_id, horizon, walk=True),
                "raw single": functools.partial(_raw_single, raw, query),
                "API index only": functools.partial(_index_only, app.history.search, params),
                "raw index only": functools.partial(
                    _raw_search, raw, query, thread_id, horizon, walk=False
                ),
            }
            assert [hit.source_id for hit in app.history.search(params).hits] == [
                row[2] for row in _raw_search(raw, query, thread_id, horizon, walk=True)[:20]
            ], query
            spent = {side: timed(calls[side], rounds) for side in sides}
            for side in sides:
                figures[side] += spent[side]
            if per_query:
                print(f"  {query!r:<24}" + "".join(
                    f"  {side} {statistics.median(spent[side]):6.2f} / {p95(spent[side]):6.2f}"
                    for side in sides
                ))  # fmt: skip
    print(f"{'':<34} {'median ms':>9} {'p95 ms':>8}")
    names = {
        "API": "history_search (API)",
        "raw": "raw psycopg, same statements",
        "raw single": "raw psycopg, one ILIKE (old)",
        "API index only": "API, index only (old plan)",
        "raw index only": "raw, index only (old plan)",
    }
    for side in sides:
        values = figures[side]
        print(f"{names[side]:<34} {statistics.median(values):>9.2f} {p95(values):>8.2f}")
    api, base = figures["API"], figures["raw"]
    ratios = statistics.median(api) / statistics.median(base), p95(api) / p95(base)
    print(f"{'ratio API / raw (same statements)':<34} {ratios[0]:>9.2f} {ratios[1]:>8.2f}")
    print(
        f"goal: history_search p95 <= 20 ms over 1,000,000 messages: "
        f"{'met' if p95(api) <= 20 else 'NOT met'} ({p95(api):.2f} ms); load {load()}"
    )


def _index_only(
    search: Callable[[HistorySearchParams], object], params: HistorySearchParams
) -> None:
    """The search as before the walk: the trigram index's statement alone."""
    saved = postgresql_dialect.SEARCH_WALK_FIRST
    postgresql_dialect.SEARCH_WALK_FIRST = 0
    try:
        search(params)
    finally:
        postgresql_dialect.SEARCH_WALK_FIRST = saved


# -- http --------------------------------------------------------------------------------------


def _http_client(port: int, path: str, token: str, seconds: float) -> int:
    """Requests answered in `seconds` by one client waiting for each answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}"}
    done = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        done += 1
    conn.close()
    return done


def _raw_client(info: dict[str, Any], memory_id: str, seconds: float) -> int:
    """Reads of the memory row in `seconds`, each in its own read-only transaction."""
    done = 0
    with psycopg.connect(**info) as conn:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                assert conn.execute(
                    "SELECT * FROM memories WHERE memory_id = %s", (memory_id,)
                ).fetchone()
            done += 1
    return done


def rate(target: Callable[..., int], args: tuple[Any, ...], clients: int, seconds: float) -> float:
    """Requests per second of `clients` processes each running `target(*args, seconds)`."""
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        counts = pool.starmap(target, [(*args, seconds)] * clients)
    return sum(counts) / seconds


def serve(url: str, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_DATABASE_URL"] = url
    process = subprocess.Popen(
        [sys.executable, "-m", "rutter", "http", "--bind", "127.0.0.1:0", "--workers",
         str(workers)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    line = process.stderr.readline().decode()
    match = re.search(r"127\.0\.0\.1:(\d+)/", line)
    assert match, line
    port = int(match.group(1))
    # The parent listens before its workers have started: wait for them, then warm them up
    # (each worker's first requests import and compile what the later ones reuse).
    deadline = time.monotonic() + 120
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    while workers > 1 and len(children.read_text().split()) <= workers:  # + resource tracker
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.1)
    return process, port


def _raw_sqlite_client(path: str, memory_id: str, seconds: float) -> int:
    """Reads of the memory row in `seconds` from the SQLite file, each in its own transaction
    (as the store reads: BEGIN, the statement, ROLLBACK)."""
    import sqlite3

    done = 0
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            conn.execute("BEGIN")
            assert conn.execute(
                "SELECT * FROM memories WHERE memory_id = ?", (memory_id,)
            ).fetchone()
            conn.execute("ROLLBACK")
            done += 1
    finally:
        conn.close()
    return done


def bench_http(server: PostgresServer, seconds: float, engines: list[str]) -> None:
    print(f"== http: {seconds:.0f} s a measure; load {load()}")
    for engine in engines:
        if engine == "postgresql":
            database, url = migrated(server)
        else:
            database = str(Path(tempfile.mkdtemp(prefix="rutter-bench-sqlite-")) / "rutter.db")
            url = f"sqlite:///{database}"
        root = Path(tempfile.mkdtemp(prefix="rutter-bench-ws-"))
        (root / "AGENTS.md").write_text("rules\n")
        with open_store(url) as store:
            app = Rutter(store)
            app.workspaces.register(
                RegisterWorkspaceParams(workspace_id="demo", root=str(root), cwd="/")
            )
            for n in range(50):
                app.memory.create(
                    CreateMemoryParams(scope="project", workspace_id="demo", title=f"m{n}",
                                       content=f"parse_input_stream step {n}"),
                    actor="cli",
                )  # fmt: skip
            memory_id = app.memory.create(
                CreateMemoryParams(scope="user", title="read me", content=BODY), actor="cli"
            ).memory_id
            token = app.tokens.create(CreateTokenParams(scope="read"), actor="cli").secret
        reads = {
            "GET memory": f"/api/v1/memories/{memory_id}",
            "GET history search": "/api/v1/history/search?query=input_stream&workspace_id=demo",
        }
        print(f"-- {engine}; load {load()}")
        print(f"{'operation':<32} {'1 client':>9} {'4 clients':>10} {'4/1':>6}")
        if engine == "postgresql":
            raw: tuple[Callable[..., int], tuple[Any, ...]] = (
                _raw_client,
                (conninfo(server, database), memory_id),
            )
        else:
            raw = (_raw_sqlite_client, (database, memory_id))
        one = rate(raw[0], raw[1], 1, seconds)
        four = rate(raw[0], raw[1], 4, seconds)
        label = f"raw {'psycopg' if engine == 'postgresql' else 'sqlite3'}: read memory row"
        print(f"{label:<32} {one:>9.1f} {four:>10.1f} {four / one:>6.2f}")
        for workers in (1, 2):
            process, port = serve(url, workers)
            try:
                for path in reads.values():
                    rate(_http_client, (port, path, token), 4, min(seconds, 3))  # warm-up
                for name, path in reads.items():
                    one = rate(_http_client, (port, path, token), 1, seconds)
                    four = rate(_http_client, (port, path, token), 4, seconds)
                    label = f"{name}, {workers} worker{'s' if workers > 1 else ''}"
                    print(f"{label:<32} {one:>9.1f} {four:>10.1f} {four / one:>6.2f}")
            finally:
                process.terminate()
                process.wait(30)
    print(f"goal: with 2 workers on 2 cores, 4 clients >= 1.8x one client; load {load()}")


# -- acting as a person ------------------------------------------------------------------------

ACTING_PASSWORD = "bench-acting-pw"
ACTING_WORD = "tabulated"
"""In every user memory of the `acting` part: what its history searches find."""


def _acting_roles(server: PostgresServer, url: str, database: str) -> tuple[str, str]:
    """`store init` on the database, a person (`alice`) and a service role that may act as
    her, both in the members' group; (service, person)."""
    from rutter_core.store.admin import initialize

    with open_store(url) as store:
        initialize(store, group="bench_team")
    with server.connect(database) as conn:
        for role in ("bench_svc", "bench_alice"):
            conn.execute(
                f"CREATE ROLE {role} LOGIN PASSWORD '{ACTING_PASSWORD}' IN ROLE bench_team"
            )
        conn.execute("GRANT bench_alice TO bench_svc")
    return "bench_svc", "bench_alice"


class RawActing:
    """The statements of a memory read by ID and a list(20) of user memories, by hand, on one
    connection of its own as the service role, each asking for `person`'s user memories as
    the store does; `change`: each transaction first takes `person`'s role, as the store
    acting for a person does (`SELECT set_config('role', ..., true)`: SET LOCAL ROLE)."""

    def __init__(self, info: dict[str, Any], person: str, memory_id: str, *, change: bool) -> None:
        self.conn = psycopg.connect(**info, autocommit=True)
        self.person = person
        self.change = change
        self.memory_id = memory_id

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        if self.change:
            self.conn.execute("SELECT set_config('role', %s, true)", (self.person,))
        rows = self.conn.execute(sql, params).fetchall()
        self.conn.execute("ROLLBACK")
        assert rows
        return rows

    def get(self) -> None:
        self._read(
            "SELECT * FROM memories WHERE memory_id = %s AND (scope <> 'user' OR owner = %s)",
            (self.memory_id, self.person),
        )

    def list(self) -> None:
        self._read(
            "SELECT * FROM memories WHERE (scope <> 'user' OR owner = %s) AND status = 'active' "
            "AND scope = 'user' ORDER BY updated_at DESC, memory_id DESC LIMIT %s",
            (self.person, 21),
        )


class ApiActing:
    """The app facade on the service's store, as itself or acting for a person."""

    def __init__(self, rutter: Rutter, memory_id: str) -> None:
        self.rutter = rutter
        self.memory_id = memory_id

    def get(self) -> None:
        from rutter_core.app.memory import GetMemoryParams

        self.rutter.memory.get(GetMemoryParams(id=self.memory_id))

    def list(self) -> None:
        assert self.rutter.memory.list(ListMemoriesParams(scope="user", limit=20)).items


def _interleaved(operations: dict[str, Callable[[], None]], count: int) -> dict[str, list[float]]:
    """`count` of each operation, taking turns one at a time (so each side sees the same
    moments of a shared machine): each side's seconds per operation."""
    spent: dict[str, list[float]] = {side: [] for side in operations}
    for _ in range(count):
        for side, operation in operations.items():
            began = time.perf_counter()
            operation()
            spent[side].append(time.perf_counter() - began)
    return spent


class HttpMix:
    """One keep-alive connection with one bearer, asking in turn for a memory by ID, a
    list(20) of user memories and a history search."""

    def __init__(self, port: int, token: str, memory_id: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}"}
        self.paths = (
            f"/api/v1/memories/{memory_id}",
            "/api/v1/memories?scope=user&limit=20",
            f"/api/v1/history/search?query={ACTING_WORD}",
        )
        self.turn = 0

    def __call__(self) -> None:
        self.turn += 1
        self.conn.request("GET", self.paths[self.turn % len(self.paths)], headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        assert response.status == 200, body[:200]


def bench_acting(server: PostgresServer, ops: int, rounds: int) -> None:
    print(f"== acting: {ops} ops x {rounds} rounds; load {load()}")
    database, url = migrated(server)
    service, person = _acting_roles(server, url, database)
    service_url = server.url(database, user=service, password=ACTING_PASSWORD)
    info = {**conninfo(server, database), "user": service, "password": ACTING_PASSWORD}
    # Each side its own pool (a connection keeps serving one role), and a third acting on the
    # first side's pool, taking turns with it on the same connections.
    store = open_store(service_url, pool="service")
    second = open_store(service_url, pool="service")
    itself, acting = Rutter(store), Rutter(second.acting_as(person))
    shared = Rutter(store.acting_as(person))
    ids = {}
    for name, app in (("itself", itself), ("acting", acting)):
        for n in range(50):  # the same user memories for each, the lists' pages full
            ids[name] = app.memory.create(
                CreateMemoryParams(scope="user", title=f"m{n}", content=f"{ACTING_WORD} {n}"),
                actor="cli",
            ).memory_id
    tokens = {
        "itself": itself.tokens.create(CreateTokenParams(scope="read"), actor="cli").secret,
        "acting": acting.tokens.create(CreateTokenParams(scope="read"), actor="cli").secret,
    }
    targets: dict[str, RawActing | ApiActing] = {
        "raw": RawActing(info, service, ids["itself"], change=False),
        "raw+role": RawActing(info, person, ids["acting"], change=True),
        "API": ApiActing(itself, ids["itself"]),
        "API acting_as": ApiActing(acting, ids["acting"]),
        "shared pool": ApiActing(shared, ids["acting"]),
    }
    # Pairs, each side taking turns with the one it is compared with, operation by operation.
    pairs = (("raw", "raw+role"), ("API", "API acting_as"), ("API", "shared pool"))
    names = ("get", "list(20)")
    figures: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(rounds):
        for name in names:
            for pair in pairs:
                spent = _interleaved(
                    {side: (targets[side].get if name == "get" else targets[side].list)
                     for side in pair}, ops,
                )  # fmt: skip
                for side, seconds in spent.items():
                    figures.setdefault((name, pair[1], side), []).extend(seconds)
    print("median us per operation, each pair measured taking turns")
    print(f"{'operation':<10} {'raw':>6} {'+role':>6} {'ratio':>6}   {'API':>6} {'acting':>7} "
          f"{'ratio':>6}   {'API':>6} {'acting, shared pool':>19} {'ratio':>6}")  # fmt: skip
    for name in names:
        row = f"{name:<10}"
        for (base, other), width in zip(pairs, (6, 7, 19), strict=True):
            a = statistics.median(figures[(name, other, base)]) * 1e6
            b = statistics.median(figures[(name, other, other)]) * 1e6
            row += f" {a:>6.0f} {b:>{width}.0f} {b / a:>6.2f}  "
        print(row.rstrip())
    for target in targets.values():
        if isinstance(target, RawActing):
            target.conn.close()
    store.close()
    second.close()
    process, port = serve(service_url, 1)
    try:
        mixes = {side: HttpMix(port, token, ids[side]) for side, token in tokens.items()}
        _interleaved(dict(mixes), 30)  # warm-up
        spent = {"itself": [], "acting": []}
        for _ in range(rounds):
            for side, seconds in _interleaved(dict(mixes), ops).items():
                spent[side] += seconds
        for mix in mixes.values():
            mix.conn.close()
    finally:
        process.terminate()
        process.wait(30)
    mine, hers = (statistics.median(spent[side]) * 1000 for side in ("itself", "acting"))
    print(
        f"HTTP mix (GET memory, list(20), history search), 1 worker, median ms: bearer of "
        f"the service role {mine:.2f}, of a person {hers:.2f}, ratio {hers / mine:.2f}"
    )
    print(
        f"goal: over HTTP a person's bearer costs at most 1.1x the service role's own: "
        f"{'met' if hers <= 1.1 * mine else 'NOT met'}; load {load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="memory,history,http,acting")
    parser.add_argument("--ops", type=int, default=200, help="memory operations per measure")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--search-rounds", type=int, default=20)
    parser.add_argument("--per-query", action="store_true")
    parser.add_argument(
        "--index-only",
        action="store_true",
        help="also time the search as before the walk (the trigram index's statement alone)",
    )
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument(
        "--engines", default="postgresql,sqlite", help="the stores the http part serves"
    )
    args = parser.parse_args()
    parts = set(args.only.split(","))
    server = start(fsync=True)
    try:
        version = psycopg.connect(**conninfo(server, "postgres")).info.server_version
        print(f"PostgreSQL {version // 10000}.{version % 10000}, fsync on; {os.cpu_count()} "
              f"cores; load {load()}")  # fmt: skip
        if "memory" in parts:
            bench_memory(server, args.ops, args.rounds)
        if "history" in parts:
            bench_history(
                server, args.messages, args.search_rounds, args.per_query, args.index_only
            )
        if "http" in parts:
            bench_http(server, args.seconds, args.engines.split(","))
        if "acting" in parts:
            bench_acting(server, args.ops, args.rounds)
    finally:
        server.stop()
    print(json.dumps({"done": sorted(parts)}))


if __name__ == "__main__":
    main()
