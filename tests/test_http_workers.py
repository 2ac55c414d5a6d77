"""`rutter http --workers N` and several `rutter http` processes on one store (SQLite file or
PostgreSQL database): writers racing on one memory through different processes have exactly one
winner per version, the losers a typed conflict, and no write is lost; SIGTERM and SIGINT stop
the service with every worker gone."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.http_server import Server, serving, workers_of
from tests.testing import Cli, write_tree

pytestmark = pytest.mark.both_dialects


@pytest.fixture
def cli(tmp_path: Path, store_url: str) -> Cli:
    root = (tmp_path / "ws").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    made = Cli(tmp_path / "home", root, database_url=store_url)
    made.json("workspace", "register", "demo", str(root))
    return made


@pytest.fixture
def servers(cli: Cli) -> Iterator[list[Server]]:
    """Two services on the store: one with two workers, one of a single process."""
    with ExitStack() as stack:
        multi = stack.enter_context(serving(cli, "--workers", "2"))
        yield [multi, stack.enter_context(serving(cli))]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"


def test_racing_writers_through_several_processes_have_one_winner_per_version(
    servers: list[Server],
) -> None:
    multi, single = servers
    assert len(workers_of(multi.process)) == 2
    made = multi.control_call(
        "POST", "memories",
        {"scope": "project", "workspace_id": "demo", "title": "race", "content": "v1"},
    )  # fmt: skip
    assert made.status == 201, made.text
    path = f"memories/{made.json['id']}"
    winners: list[str] = []
    for version in range(1, 6):

        def edit(n: int, version: int = version) -> tuple[int, str, dict[str, Any]]:
            server = servers[n % 2]
            content = f"round {version} writer {n}"
            answer = server.control_call(
                "PATCH", path, {"expected_version": version, "content": content}
            )
            return answer.status, content, answer.json

        with ThreadPoolExecutor(max_workers=8) as pool:
            outcomes = list(pool.map(edit, range(12)))
        won = [content for status, content, _ in outcomes if status == 200]
        lost = [body for status, _, body in outcomes if status != 200]
        assert len(won) == 1, outcomes
        assert len(lost) == 11
        for body in lost:
            assert body["error"]["code"] == "conflict"
            assert body["error"]["details"]["current_version"] == version + 1
        winners.append(won[0])
        # Whichever process answers, the winner's text is what the store holds.
        for server in servers:
            current = server.get(path).json
            assert (current["version"], current["content"]) == (version + 1, won[0])
    # No write lost: each round's winner is in the memory's history, in order.
    final = single.get(path).json
    assert final["version"] == 6
    assert final["content"] == winners[-1]


def test_many_creators_through_both_services_lose_nothing(servers: list[Server]) -> None:
    def create(n: int) -> int:
        body = {"scope": "project", "workspace_id": "demo", "title": f"m{n}", "content": "c"}
        return servers[n % 2].control_call("POST", "memories", body).status

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(create, range(24))) == {201}
    listed = servers[0].get("memories?workspace_id=demo&limit=100").json["items"]
    assert sorted(item["title"] for item in listed) == sorted(f"m{n}" for n in range(24))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_stops_the_service_with_every_worker_gone(cli: Cli, stop: signal.Signals) -> None:
    with serving(cli, "--workers", "2") as server:
        workers = workers_of(server.process)
        assert len(workers) == 2
        assert server.get("memories").status == 200
        server.process.send_signal(stop)
        assert server.process.wait(timeout=30) == 0
    assert not [pid for pid in workers if alive(pid)]


def test_a_number_of_workers_out_of_range_is_a_usage_error(cli: Cli) -> None:
    for workers in ("0", "65"):
        refused = cli.json("http", "--bind", "127.0.0.1:0", "--workers", workers, code=2)
        assert refused["error"]["code"] == "invalid_workers"


def test_several_workers_on_a_store_in_one_processs_memory_are_refused(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path, database_url="sqlite://")
    refused = cli.json("http", "--bind", "127.0.0.1:0", "--workers", "2", code=3)
    assert refused["error"]["code"] == "store_not_shareable"


def test_every_worker_is_the_machine_the_service_runs_as(tmp_path: Path, store_url: str) -> None:
    """A worker reads the registrations of the machine the parent is (`RUTTER_MACHINE_ID`):
    a workspace registered on it reads its files through every worker."""
    root = (tmp_path / "ws").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    on_ana = Cli(tmp_path / "home", root, {"RUTTER_MACHINE_ID": "ana"}, database_url=store_url)
    on_ana.json("workspace", "register", "demo", str(root))
    with serving(on_ana, "--workers", "2") as server:
        workers = workers_of(server.process)
        assert len(workers) == 2
        answers = [
            server.request(
                "GET", "workspaces/demo/project-instructions?target=.", token=server.read
            )
            for _ in range(16)
        ]
    assert {answer.status for answer in answers} == {200}, [a.text for a in answers][:2]
