"""Connection pools on PostgreSQL, by the kind of process: a CLI call leaves no session open
behind it; a long-lived server holds a bounded number, checks each before use (a session the
server ended costs a reconnect, not a failed request), and a request that finds them all busy
waits, then fails `store_busy`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from rutter_core.kernel.errors import StoreError
from rutter_core.store import Store, open_store
from rutter_core.store.dialects.postgresql import SERVICE_POOL_OVERFLOW, SERVICE_POOL_SIZE
from tests.postgres import PostgresServer
from tests.testing import Cli

pytestmark = pytest.mark.postgres


def sessions(server: PostgresServer, url: str) -> int:
    """rutter's sessions on the database `url` names, as the server counts them."""
    with server.connect() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = %s AND application_name = 'rutter'",
            (make_url(url).database,),
        ).fetchone()
    assert row is not None
    return int(str(row[0]))


def sessions_once_settled(server: PostgresServer, url: str, expected: int) -> int:
    """`sessions` once it is `expected`, or what it still is after a while: a backend whose
    client closed the connection ends a moment later, on the server's own time, and is counted
    until then."""
    deadline = time.monotonic() + 30
    while (found := sessions(server, url)) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_a_cli_call_leaves_no_session_open(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    cli = Cli(tmp_path / "home", tmp_path, database_url=postgres_url)
    (tmp_path / "home").mkdir()
    made = cli.json(
        "context", "memory", "create", "--scope", "user", "--title", "t", "--content", "remember"
    )
    assert made["version"] == 1
    cli.json("context", "memory", "list", "--scope", "user")
    # In this very process (the CLI ran in it): every connection was closed with the command.
    assert sessions_once_settled(postgres_server, postgres_url, 0) == 0


def test_a_store_opened_for_one_call_holds_at_most_one_idle_session(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    with open_store(postgres_url) as store:
        for _ in range(5):
            with store.read() as conn:
                conn.exec_driver_sql("SELECT 1")
        assert sessions(postgres_server, postgres_url) == 1
    assert sessions_once_settled(postgres_server, postgres_url, 0) == 0


@pytest.fixture
def served(postgres_url: str) -> Iterator[Store]:
    with open_store(postgres_url, pool="service", busy_timeout_ms=300) as store:
        yield store


def test_a_servers_pool_is_bounded_and_a_request_beyond_it_is_store_busy(
    postgres_server: PostgresServer, postgres_url: str, served: Store
) -> None:
    bound = SERVICE_POOL_SIZE + SERVICE_POOL_OVERFLOW
    release = threading.Event()
    entered = threading.Semaphore(0)

    def hold() -> None:
        with served.read() as conn:
            conn.exec_driver_sql("SELECT 1")
            entered.release()
            release.wait(60)

    holders = [threading.Thread(target=hold) for _ in range(bound)]
    for each in holders:
        each.start()
    try:
        for _ in range(bound):
            assert entered.acquire(timeout=60)
        assert sessions(postgres_server, postgres_url) == bound
        with pytest.raises(StoreError) as raised, served.read():
            pass
        assert raised.value.code == "store_busy"
    finally:
        release.set()
        for each in holders:
            each.join(60)
    # Back under the bound: the overflow's connections are closed as they are returned.
    assert served.engine.pool.checkedin() == SERVICE_POOL_SIZE  # type: ignore[attr-defined]
    assert sessions_once_settled(postgres_server, postgres_url, SERVICE_POOL_SIZE) == (
        SERVICE_POOL_SIZE
    )
    with served.read() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar_one() == 1


def test_a_server_reconnects_when_its_idle_sessions_were_ended(
    postgres_server: PostgresServer, postgres_url: str, served: Store
) -> None:
    with served.read() as conn:
        conn.exec_driver_sql("SELECT 1")
    with postgres_server.connect() as admin:
        ended = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND application_name = 'rutter'",
            (make_url(postgres_url).database,),
        ).fetchone()
    assert ended is not None
    assert int(str(ended[0])) == 1
    # The pooled connection is dead; the check before use replaces it.
    with served.read() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar_one() == 1
