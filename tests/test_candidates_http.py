"""Experience candidates over `rutter http` (issue 30): a real server process over a real store.
The read bearer lists and shows, only the control bearer confirms or rejects; a confirmation
needs `confirm: true`; a changed note is `candidate_stale` and a stale version `conflict` (409);
repeated answers are the same and write nothing twice; the actor is `http_control`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rutter_http.openapi import openapi_document
from tests.http_server import ServedRun, served_run
from tests.testing import Cli

Env = ServedRun


def _prepare(cli: Cli, run: dict[str, Any]) -> None:
    """Three decisions with a reference, in a run that completed: three candidates."""
    for number in range(3):
        cli.json(
            "session", "note", "add", run["thread_id"], "--kind", "decision",
            "--text", f"decision {number}", "--reference", "src/parser.py",
        )  # fmt: skip
    cli.json("run", "status", run["run_id"], "running")
    cli.json("run", "status", run["run_id"], "completed")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with served_run(
        tmp_path_factory.mktemp("http-candidates"),
        {"AGENTS.md": "root rules\n", "src/parser.py": "x = 1\n"},
        _prepare,
    ) as served:
        yield served


def _items(env: Env) -> dict[str, dict[str, Any]]:
    listed = env.server.get("memory-candidates?workspace_id=demo")
    assert listed.status == 200, listed.text
    return {item["content"]: item for item in listed.json["items"]}


def test_read_lists_and_shows_control_confirms(env: Env) -> None:
    item = _items(env)["decision 0"]
    assert item["completion"]["kind"] == "run_completed"
    shown = env.server.get(f"memory-candidates/{item['candidate_id']}?workspace_id=demo")
    assert (shown.status, shown.json) == (200, item)
    elsewhere = env.server.get(f"memory-candidates/{item['candidate_id']}?workspace_id=other")
    assert (elsewhere.status, elsewhere.code) == (404, "candidate_not_found")

    path = f"memory-candidates/{item['candidate_id']}/confirm"
    body = {"expected_version": 1, "fingerprint": item["fingerprint"], "source_version": 1}
    by_reader = env.server.request("POST", path, {**body, "confirm": True}, token=env.server.read)
    assert by_reader.status == 403
    unconfirmed = env.server.control_call("POST", path, body)
    assert (unconfirmed.status, unconfirmed.code) == (400, "confirmation_required")
    stale = env.server.control_call("POST", path, {**body, "expected_version": 2, "confirm": True})
    assert (stale.status, stale.code) == (409, "conflict")
    changed = env.server.control_call("POST", path, {**body, "source_version": 2, "confirm": True})
    assert (changed.status, changed.code) == (409, "candidate_stale")

    done = env.server.control_call("POST", path, {**body, "confirm": True})
    assert done.status == 200, done.text
    candidate, memory = done.json["candidate"], done.json["memory"]
    assert (candidate["status"], candidate["content"], candidate["review"]["by"]) == (
        "confirmed", None, "http_control",
    )  # fmt: skip
    assert (memory["created_by"], memory["source_kind"]) == ("http_control", "operator_explicit")
    again = env.server.control_call("POST", path, {**body, "confirm": True})
    assert (again.status, again.json) == (200, done.json)
    assert "decision 0" not in _items(env)


def test_reject_resolves_without_a_memory(env: Env) -> None:
    item = _items(env)["decision 1"]
    path = f"memory-candidates/{item['candidate_id']}/reject"
    by_reader = env.server.request("POST", path, {"expected_version": 1}, token=env.server.read)
    assert by_reader.status == 403
    rejected = env.server.control_call("POST", path, {"expected_version": 1})
    assert rejected.status == 200, rejected.text
    assert (rejected.json["status"], rejected.json["title"], rejected.json["references"]) == (
        "ignored", None, [],
    )  # fmt: skip
    assert rejected.json["review"]["memory_id"] is None
    assert env.server.control_call("POST", path, {"expected_version": 1}).json == rejected.json
    confirm = env.server.control_call(
        "POST", f"memory-candidates/{item['candidate_id']}/confirm",
        {"expected_version": 1, "fingerprint": item["fingerprint"], "source_version": 1,
         "confirm": True},
    )  # fmt: skip
    assert (confirm.status, confirm.code) == (409, "conflict")


def test_the_routes_are_in_the_openapi_document() -> None:
    paths = openapi_document()["paths"]
    assert set(paths["/api/v1/memory-candidates"]) == {"get"}
    assert set(paths["/api/v1/memory-candidates/{candidate_id}"]) == {"get"}
    assert set(paths["/api/v1/memory-candidates/{candidate_id}/confirm"]) == {"post"}
    assert set(paths["/api/v1/memory-candidates/{candidate_id}/reject"]) == {"post"}
