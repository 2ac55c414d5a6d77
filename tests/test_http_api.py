"""`rutter http` end to end (issue 17, docs/reference/surfaces.md): a real server process on a free
loopback port over a real store, driven with plain HTTP. Every route answers with the app's
documents; every 4xx of the reference (401, 403, 404, 409, 413, 400/422, 415) comes with the
error document and echoes nothing the client sent; read and control bearers are separate and
revocation takes effect at once; concurrent writes on one version have exactly one winner;
the actor is always `http_control`."""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.http_server import API, Server, serving
from tests.testing import Cli, raw_rows

ECHO = "<echo-marker-7f3e ünïcødé>"
"""Sent in every field of the echo test: no error may repeat it."""


# The store's engine matters to every route: each test on a served store runs on both.
pytestmark = pytest.mark.both_dialects


@dataclass
class Env:
    server: Server
    root: Path
    run: dict[str, Any]
    url: str

    def rows(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        """`sql` on the served store, behind the server's back."""
        return raw_rows(self.url, sql, *params)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, module_store_url: str) -> Iterator[Env]:
    base = tmp_path_factory.mktemp("http")
    root = (base / "ws").resolve()
    write_tree(root, {"AGENTS.md": "root rules\n", "src/CLAUDE.md": "src rules\n"})
    cli = Cli(base / "home", root, database_url=module_store_url)
    cli.json("workspace", "register", "demo", str(root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    with serving(cli) as server:
        yield Env(server, root, run, module_store_url)


def _memory(env: Env, title: str = "Tests") -> dict[str, Any]:
    made = env.server.control_call(
        "POST", "memories", {"scope": "project", "workspace_id": "demo", "title": title,
                             "content": "run the tests first"},
    )  # fmt: skip
    assert made.status == 201, made.text
    document: dict[str, Any] = made.json
    return document


# -- tokens ------------------------------------------------------------------------------------


def test_a_token_secret_is_shown_once_and_stored_only_as_its_hash(
    tmp_path: Path, store_url: str, store_dialect: str
) -> None:
    cli = Cli(tmp_path / "home", tmp_path, database_url=store_url)
    made = cli.json("http", "token", "create", "--scope", "read")
    assert set(made) == {"token_id", "scope", "owner", "secret"}
    assert made["scope"] == "read"
    assert made["token_id"].startswith("tok_")
    person = made["owner"]  # the operating-system user: a SQLite store is one person's
    assert person
    listed = cli.json("http", "token", "list")
    assert listed == {
        "items": [
            {"token_id": made["token_id"], "scope": "read", "owner": person,
             "created_by_person": person, "created_at": listed["items"][0]["created_at"],
             "revoked_at": None}
        ]
    }  # fmt: skip
    assert made["secret"] not in json.dumps(listed)
    rows = raw_rows(store_url, "SELECT token_id, secret_sha256 FROM http_tokens")
    assert rows == [(made["token_id"], hashlib.sha256(made["secret"].encode()).hexdigest())]
    if store_dialect == "sqlite":  # the whole file (PostgreSQL's: its rows, just above)
        assert made["secret"].encode() not in (tmp_path / "store.db").read_bytes()

    revoked = cli.json("http", "token", "revoke", made["token_id"])
    assert revoked["revoked_at"] is not None
    assert cli.json("http", "token", "list")["items"] == []
    assert cli.json("http", "token", "list", "--all")["items"] == [revoked]
    assert cli.json("http", "token", "create", "--scope", "admin", code=2)["error"]["code"] == (
        "invalid_scope"
    )
    missing = cli.json("http", "token", "revoke", "tok_" + "0" * 26, code=5)
    assert missing["error"]["code"] == "token_not_found"


# -- 401 and 403 -------------------------------------------------------------------------------


def test_no_bearer_an_unknown_one_or_a_malformed_one_is_401(env: Env) -> None:
    server = env.server
    forged = server.read[:-4] + ("AAAA" if not server.read.endswith("AAAA") else "BBBB")
    for headers in (
        {},
        {"Authorization": "Bearer"},
        {"Authorization": f"Basic {server.read}"},
        {"Authorization": "Bearer rutter_tok_nonsense"},
        {"Authorization": f"Bearer {forged}"},
    ):
        answer = server.request("GET", "memories", headers=headers)
        assert answer.status == 401, headers
        assert answer.code == "unauthorized"
        assert answer.headers["www-authenticate"] == "Bearer"
    # A mutation without a bearer is 401 too, before its body is looked at.
    answer = server.request("POST", "memories", raw=b"{not json", headers={})
    assert answer.status == 401


def test_a_read_bearer_reads_and_is_403_on_every_mutation(env: Env) -> None:
    server = env.server
    memory = _memory(env, "for the read bearer")
    assert server.get(f"memories/{memory['id']}").json == memory
    node = env.run["root_node_id"]
    mutations = [
        ("POST", "memories", {"scope": "user", "title": "t", "content": "c"}),
        ("PATCH", f"memories/{memory['id']}", {"expected_version": 1, "content": "x"}),
        ("DELETE", f"memories/{memory['id']}", {"expected_version": 1}),
        ("POST", f"runs/{env.run['run_id']}/project-instructions/refresh",
         {"expected_fingerprint": env.run["fingerprint"],
          "expected_live_fingerprint": env.run["fingerprint"]}),
        ("POST", f"runs/{env.run['run_id']}/continuity-checkpoints", {"title": "t"}),
        ("POST", f"continuity-nodes/{node}/fork", {"goal": "g"}),
        ("POST", f"continuity-nodes/{node}/resume", {}),
        ("POST", f"threads/{env.run['thread_id']}/pins", {"text": "keep it"}),
        ("PATCH", "pins/pin_01M8YKAC8M87V2GGG082SRWVRT", {"expected_version": 1, "text": "t"}),
        ("DELETE", "pins/pin_01M8YKAC8M87V2GGG082SRWVRT", {"expected_version": 1}),
    ]  # fmt: skip
    before = _counts(env)
    for method, path, body in mutations:
        answer = server.request(method, path, body, token=server.read)
        assert answer.status == 403, (method, path, answer.text)
        assert answer.code == "forbidden"
    assert _counts(env) == before
    assert server.get(f"memories/{memory['id']}").json["version"] == 1


def _counts(env: Env) -> dict[str, int]:
    return {
        table: int(str(env.rows(f"SELECT count(*) FROM {table}")[0][0]))
        for table in ("memories", "runs", "continuity_nodes", "pins")
    }


def test_a_revoked_bearer_is_401_from_the_next_request(env: Env) -> None:
    server = env.server
    made = server.cli.json("http", "token", "create", "--scope", "control")
    assert server.request("GET", "memories", token=made["secret"]).status == 200
    server.cli.json("http", "token", "revoke", made["token_id"])
    answer = server.request("GET", "memories", token=made["secret"])
    assert (answer.status, answer.code) == (401, "unauthorized")
    answer = server.request(
        "POST", "memories", {"scope": "user", "title": "t", "content": "c"}, token=made["secret"]
    )
    assert answer.status == 401


# -- memories ----------------------------------------------------------------------------------


def test_memories_are_created_read_edited_disabled_exported_and_deleted(env: Env) -> None:
    server = env.server
    memory = _memory(env, "lifecycle")
    assert memory["created_by"] == "http_control"
    assert memory["version"] == 1
    listed = server.get("memories?scope=project&workspace_id=demo&all=true&limit=500").json
    assert memory in listed["items"]
    edited = server.control_call(
        "PATCH", f"memories/{memory['id']}", {"expected_version": 1, "content": "new text"}
    )
    assert edited.status == 200, edited.text
    assert (edited.json["version"], edited.json["content"]) == (2, "new text")
    assert edited.json["updated_by"] == "http_control"
    disabled = server.control_call(
        "PATCH", f"memories/{memory['id']}", {"expected_version": 2, "status": "disabled"}
    )
    assert (disabled.status, disabled.json["status"], disabled.json["version"]) == (
        200, "disabled", 3,
    )  # fmt: skip
    both = server.control_call(
        "PATCH", f"memories/{memory['id']}",
        {"expected_version": 3, "status": "active", "title": "x"},
    )  # fmt: skip
    assert (both.status, both.code) == (400, "one_change")
    exported = server.get("memories/export?scope=project&workspace_id=demo&all=true").json
    assert exported["protocol_version"] == "context_memory_export.v1"
    assert exported["capability_grant"] is False
    assert memory["id"] in [item["id"] for item in exported["items"]]

    stale = server.control_call("DELETE", f"memories/{memory['id']}", {"expected_version": 2})
    assert (stale.status, stale.code) == (409, "conflict")
    no_body = server.request("DELETE", f"memories/{memory['id']}", token=server.control)
    assert no_body.status in (400, 415), no_body.text
    empty = server.control_call("DELETE", f"memories/{memory['id']}", {})
    assert (empty.status, empty.code) == (422, "invalid_params")
    assert empty.json["error"]["details"]["problems"] == [
        {"field": "expected_version", "rule": "missing"}
    ]
    assert empty.json["error"]["message"] == "invalid params: missing field 'expected_version'"
    deleted = server.control_call("DELETE", f"memories/{memory['id']}", {"expected_version": 3})
    assert deleted.status == 200, deleted.text
    assert deleted.json == {
        "id": memory["id"], "version": 3, "deleted": True, "recoverable": False,
        "purged": deleted.json["purged"],
    }  # fmt: skip
    gone = server.get(f"memories/{memory['id']}")
    assert (gone.status, gone.code) == (404, "not_found")


def test_stale_versions_are_409_and_change_nothing(env: Env) -> None:
    server = env.server
    memory = _memory(env, "stale")
    path = f"memories/{memory['id']}"
    assert server.control_call("PATCH", path, {"expected_version": 1, "title": "v2"}).status == 200
    stale = server.control_call("PATCH", path, {"expected_version": 1, "title": "lost"})
    assert (stale.status, stale.code) == (409, "conflict")
    assert stale.json["error"]["details"]["current_version"] == 2
    assert server.get(path).json["title"] == "v2"


def test_concurrent_control_writes_on_one_version_have_exactly_one_winner(env: Env) -> None:
    server = env.server
    memory = _memory(env, "race")
    path = f"memories/{memory['id']}"

    def edit(n: int) -> int:
        return server.control_call(
            "PATCH", path, {"expected_version": 1, "content": f"writer {n}"}
        ).status

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = sorted(pool.map(edit, range(16)))
    assert statuses == [200] + [409] * 15
    final = server.get(path).json
    assert final["version"] == 2
    assert final["content"].startswith("writer ")


# -- strict JSON: 400, 413, 415, 422 ---------------------------------------------------------


def test_malformed_duplicate_and_non_object_bodies_are_400(env: Env) -> None:
    server = env.server
    for raw in (
        b"{not json",
        b'{"scope": "user", "title": "a", "title": "b", "content": "c"}',
        b'["scope", "user"]',
        b'{"scope": "user", "title": "t", "content": "c", "limit": NaN}',
        b'{"scope": "user", "title": "\\ud800", "content": "c"}',
        b"\xff\xfe{}",
        b"",
    ):
        answer = server.request("POST", "memories", raw=raw, token=server.control)
        assert (answer.status, answer.code) == (400, "invalid_json"), raw
    duplicate = server.get("memories?limit=5&limit=6")
    assert (duplicate.status, duplicate.code) == (400, "duplicate_parameter")


def test_unknown_and_mistyped_fields_are_422_and_the_actor_is_never_the_clients(
    env: Env,
) -> None:
    server = env.server
    before = _counts(env)
    for body in (
        {"scope": "user", "title": "t", "content": "c", "actor": "cli"},
        {"scope": "user", "title": "t", "content": "c", "created_by": "cli"},
        {"scope": "user", "title": "t", "content": "c", "unknown": None},
        {"scope": "user", "title": 1, "content": "c"},
        {"scope": "user", "title": "t", "content": "c", "redact_sensitive": "yes"},
    ):
        answer = server.control_call("POST", "memories", body)
        assert (answer.status, answer.code) == (422, "invalid_params"), body
    mistyped = server.control_call(
        "PATCH", "memories/mem_01M8YKAC8M87V2GGG082SRWVRT", {"expected_version": "1"}
    )
    assert (mistyped.status, mistyped.code) == (422, "invalid_params")
    resume = server.control_call(
        "POST", f"continuity-nodes/{env.run['root_node_id']}/resume", {"unknown": None}
    )
    assert (resume.status, resume.code) == (422, "invalid_params")
    unknown_query = server.get("memories?owner=me")
    assert (unknown_query.status, unknown_query.code) == (422, "invalid_params")
    assert server.get("memories?all=maybe").status == 422
    assert _counts(env) == before
    actors = {row[0] for row in env.rows("SELECT created_by FROM memories")}
    assert actors <= {"http_control"}


def test_a_body_over_1_mib_is_413_before_it_is_read(env: Env) -> None:
    server = env.server
    # Declared too long: refused on the header, with no byte of the body sent.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest("POST", f"{API}/memories")
        conn.putheader("Authorization", f"Bearer {server.control}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(64 * 1024 * 1024))
        conn.endheaders()
        response = conn.getresponse()
        status, document = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 413
    assert document["error"]["code"] == "body_too_large"
    # Streamed without a length: counted as it arrives.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    chunk = b'{"content": "' + b"a" * (256 * 1024)
    try:
        conn.request(
            "POST", f"{API}/memories", body=iter([chunk] * 5),
            headers={"Authorization": f"Bearer {server.control}",
                     "Content-Type": "application/json"},
            encode_chunked=True,
        )  # fmt: skip
        response = conn.getresponse()
        status, document = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 413
    assert document["error"]["code"] == "body_too_large"
    # Just under the limit is read (and then refused for what it says, not its size).
    filler = "x" * (1024 * 1024 - 100)
    near = server.control_call("POST", "memories", {"scope": "user", "title": "t", "pad": filler})
    assert near.status == 422


def test_a_body_that_is_not_json_is_415(env: Env) -> None:
    answer = env.server.request(
        "POST", "memories", raw=b"scope=user", token=env.server.control,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    assert (answer.status, answer.code) == (415, "unsupported_media_type")


def test_unknown_records_and_routes_are_404_and_a_wrong_method_405(env: Env) -> None:
    server = env.server
    for path in (
        "memories/mem_01M8YKAC8M87V2GGG082SRWVRT",
        "runs/run_01M8YKAC8M87V2GGG082SRWVRT/project-instructions",
        "sessions/ses_01M8YKAC8M87V2GGG082SRWVRT/tree",
        "continuity-nodes/node_01M8YKAC8M87V2GGG082SRWVRT",
        "workspaces/nowhere/project-instructions?target=.",
    ):
        answer = server.get(path)
        assert answer.status == 404, (path, answer.text)
    route = server.get("no-such-route")
    assert (route.status, route.code) == (404, "route_not_found")
    wrong = server.request("PUT", "memories", {}, token=server.control)
    assert (wrong.status, wrong.code) == (405, "method_not_allowed")
    assert "POST" in wrong.headers["allow"]


def test_allow_lists_the_methods_of_the_path_named_and_head_answers_as_get(env: Env) -> None:
    server = env.server
    both = server.request("PUT", "memories", {}, token=server.control)
    assert both.headers["allow"] == "GET, HEAD, POST"
    # `/memories/export` is its own path, though `/memories/{memory_id}` would match it too
    export = server.request("OPTIONS", "memories/export", token=server.control)
    assert (export.status, export.headers["allow"]) == (405, "GET, HEAD")
    memory = _memory(env, "head")
    head = server.request("HEAD", f"memories/{memory['id']}", token=server.read)
    assert (head.status, head.text) == (200, "")
    assert head.headers["content-type"] == "application/json"
    assert server.request("HEAD", "memories/x").status == 401


def test_no_error_repeats_what_the_client_sent(env: Env) -> None:
    server = env.server
    run, node = env.run["run_id"], env.run["root_node_id"]
    probes: list[tuple[str, str, Any]] = [
        ("GET", f"memories?scope={ECHO}", None),
        ("GET", f"memories?workspace_id={ECHO}", None),
        ("GET", f"memories/{ECHO}", None),
        ("GET", f"memories/export?scope=project&workspace_id={ECHO}", None),
        ("GET", f"workspaces/demo/project-instructions?target={ECHO}/../../x", None),
        ("GET", f"workspaces/{ECHO}/project-instructions?target=.", None),
        ("GET", f"runs/{ECHO}/project-instructions", None),
        ("GET", f"sessions/{ECHO}/tree", None),
        ("GET", f"threads/{ECHO}/pins", None),
        ("POST", "memories", {"scope": ECHO, "title": "t", "content": "c"}),
        ("POST", "memories", {"scope": "project", "workspace_id": ECHO, "title": "t",
                              "content": "c"}),
        ("POST", "memories", {"scope": "user", "title": "t", "content": "c",
                              "retention": ECHO}),
        ("POST", "memories", {"scope": "user", "title": "t", "content": "c",
                              "references": [ECHO, ".env"]}),
        ("POST", "memories", {"scope": "user", "title": "t", "content": "c", ECHO: 1}),
        ("PATCH", f"memories/{ECHO}", {"expected_version": 1, "title": "t"}),
        ("PATCH", "memories/mem_01M8YKAC8M87V2GGG082SRWVRT",
         {"expected_version": 1, "status": ECHO}),
        ("POST", f"runs/{run}/project-instructions/refresh",
         {"expected_fingerprint": ECHO, "expected_live_fingerprint": ECHO}),
        ("POST", f"runs/{ECHO}/continuity-checkpoints", {"title": "t"}),
        ("POST", f"continuity-nodes/{ECHO}/fork", {"goal": "g"}),
        ("POST", f"continuity-nodes/{node}/fork", {"goal": ECHO * 400}),
        ("POST", f"threads/{ECHO}/pins", {"text": "t"}),
        ("PATCH", f"pins/{ECHO}", {"expected_version": 1, "text": "t"}),
    ]  # fmt: skip
    refused = 0
    for method, path, body in probes:
        quoted = path.replace(ECHO, http_quote(ECHO))
        answer = server.request(method, quoted, body, token=server.control)
        assert answer.status < 500, (method, path, answer.text)
        if answer.status < 400:  # e.g. a list filtered by a workspace that has no memories
            continue
        refused += 1
        assert "echo-marker" not in answer.text, (path, answer.text)
        assert http_quote(ECHO) not in answer.text
    assert refused >= len(probes) - 2
    # A control character: core messages quote values with Python's escapes.
    for path in ("workspaces/demo/project-instructions?target=zq%00zq", "memories/mem_%00zq"):
        answer = server.request("GET", path, token=server.read)
        assert 400 <= answer.status < 500, answer.text
        assert "zq" not in answer.text, answer.text


def http_quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


# -- instructions, continuity and pins --------------------------------------------------------


def test_instructions_checkpoint_tree_fork_resume_and_refresh(env: Env) -> None:
    server = env.server
    run = env.run
    snapshot = server.get("workspaces/demo/project-instructions?target=src/a.go").json
    assert snapshot["protocol_version"] == "project_instruction_snapshot.v1"
    assert [s["path"] for s in snapshot["sources"]] == ["AGENTS.md", "src/CLAUDE.md"]
    inspection = server.get(f"runs/{run['run_id']}/project-instructions").json
    assert inspection["stale"] is False
    assert inspection["pinned"]["fingerprint"] == run["fingerprint"]

    checkpoint = server.control_call(
        "POST", f"runs/{run['run_id']}/continuity-checkpoints", {"title": "before the change"}
    )
    assert checkpoint.status == 201, checkpoint.text
    node = checkpoint.json
    assert node["snapshot"]["protocol_version"] == "continuity_snapshot.v1"
    assert server.get(f"continuity-nodes/{node['node_id']}").json == node
    tree = server.get(f"sessions/{run['session_id']}/tree").json
    assert tree["protocol_version"] == "session_tree.v1"
    assert node["node_id"] in [n["node_id"] for n in tree["nodes"]]

    fork = server.control_call("POST", f"continuity-nodes/{node['node_id']}/fork", {"goal": "b"})
    assert fork.status == 201, fork.text
    assert fork.json["kind"] == "fork"
    assert fork.json["parent_node_id"] == node["node_id"]
    resume = server.control_call("POST", f"continuity-nodes/{node['node_id']}/resume", {})
    assert resume.status == 201, resume.text
    assert resume.json["mission_id"] == run["mission_id"]
    bad_resume = server.control_call(
        "POST", f"continuity-nodes/{node['node_id']}/resume", {"goal": "no goal on resume"}
    )
    assert bad_resume.status == 422

    (env.root / "AGENTS.md").write_text("root rules, changed\n", encoding="utf-8")
    drift = server.get(f"runs/{run['run_id']}/project-instructions").json
    assert drift["stale"] is True
    live = drift["live"]["fingerprint"]
    path = f"runs/{run['run_id']}/project-instructions/refresh"
    wrong = server.control_call(
        "POST", path, {"expected_fingerprint": live, "expected_live_fingerprint": live}
    )
    assert (wrong.status, wrong.code) == (409, "conflict")
    refreshed = server.control_call(
        "POST", path,
        {"expected_fingerprint": run["fingerprint"], "expected_live_fingerprint": live},
    )  # fmt: skip
    assert refreshed.status == 200, refreshed.text
    assert refreshed.json["refreshed"] is True
    assert refreshed.json["revision"] == 2
    who = env.rows(
        "SELECT confirmed_by FROM run_instruction_snapshots WHERE run_id = ? AND revision = 2",
        run["run_id"],
    )
    assert who == [("http_control",)]


def test_pins_are_added_listed_edited_and_removed(env: Env) -> None:
    server = env.server
    thread, run = env.run["thread_id"], env.run["run_id"]
    added = server.control_call("POST", f"threads/{thread}/pins", {"text": "keep the API stable"})
    assert added.status == 201, added.text
    pin = added.json
    assert pin in server.get(f"threads/{thread}/pins").json["pins"]
    assert pin["pin_id"] in [p["pin_id"] for p in server.get(f"runs/{run}/pins").json["pins"]]
    edited = server.control_call(
        "PATCH", f"pins/{pin['pin_id']}", {"expected_version": pin["version"], "text": "v2"}
    )
    assert edited.status == 200, edited.text
    stale = server.control_call(
        "DELETE", f"pins/{pin['pin_id']}", {"expected_version": pin["version"]}
    )
    assert stale.status == 409
    removed = server.control_call(
        "DELETE", f"pins/{pin['pin_id']}", {"expected_version": edited.json["version"]}
    )
    assert removed.status == 200, removed.text
    assert pin["pin_id"] not in [p["pin_id"] for p in server.get(f"threads/{thread}/pins").json[
        "pins"]]  # fmt: skip


def test_an_agents_pin_proposal_is_listed_and_answered_with_the_control_bearer(env: Env) -> None:
    from rutter_core.app.facade import Rutter
    from rutter_core.app.pins import ProposePinParams
    from rutter_core.store import open_store

    store = open_store(env.url)
    try:
        proposal = Rutter(store).pins.propose(
            ProposePinParams(run_id=env.run["run_id"], text="never skip the tests"), actor="mcp"
        )
    finally:
        store.close()
    server = env.server
    pending = server.get("pin-proposals?workspace_id=demo").json["proposals"]
    assert proposal.proposal_id in [p["proposal_id"] for p in pending]
    path = f"pin-proposals/{proposal.proposal_id}/answer"
    assert server.request("POST", path, {"choice": "pin"}, token=server.read).status == 403
    answered = server.control_call("POST", path, {"choice": "pin"})
    assert answered.status == 200, answered.text
    assert answered.json["pin"]["text"] == "never skip the tests"
    assert answered.json["pin"]["created_by"] == "http_control"
    again = server.control_call("POST", path, {"choice": "discuss"})
    assert (again.status, again.code) == (409, "conflict")


# -- the document and the binding ---------------------------------------------------------------


def test_the_served_openapi_document_is_the_checked_in_one(env: Env) -> None:
    served = env.server.request("GET", f"{API}/openapi.json")
    assert served.status == 200
    checked_in = json.loads(
        (Path(__file__).resolve().parent.parent / "docs" / "openapi.json").read_text("utf-8")
    )
    assert served.json == checked_in


def test_a_non_loopback_bind_is_refused_without_tls_and_says_why(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    refused = cli.json("http", "--bind", "0.0.0.0:8787", code=3)
    assert refused["error"]["code"] == "non_loopback_bind"
    assert "TLS" in refused["error"]["message"]
    half = cli.json("http", "--bind", "0.0.0.0:8787", "--tls-cert", "cert.pem", code=2)
    assert half["error"]["code"] == "tls_incomplete"
    assert cli.json("http", "--bind", "nowhere", code=2)["error"]["code"] == "invalid_bind"


def test_a_port_in_use_is_a_typed_refusal(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        cli = Cli(tmp_path / "home", tmp_path)
        refused = cli.json("http", "--bind", f"127.0.0.1:{port}", code=3)
    assert refused["error"]["code"] == "bind_failed"
    assert refused["error"]["details"] == {"reason": "EADDRINUSE"}


def test_the_command_line_imports_no_http_server_until_rutter_http_serves() -> None:
    probe = (
        "import sys\n"
        "from rutter_cli.main import main\n"
        "main(['--help'])\n"
        "main(['http', 'token', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rutter_http', 'fastapi', "
        "'starlette', 'uvicorn')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_tls_settings_serve_https(tmp_path: Path) -> None:
    """With a certificate and its key the server speaks TLS (what makes a non-loopback bind
    acceptable); shown on loopback, with the certificate as the client's only trust root."""
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    cli = Cli(tmp_path / "home", tmp_path)
    with serving(cli, "--tls-cert", str(cert), "--tls-key", str(key)) as server:
        context = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=30)
        try:
            conn.request(
                "GET", f"{API}/memories", headers={"Authorization": f"Bearer {server.read}"}
            )
            response = conn.getresponse()
            assert (response.status, json.loads(response.read())["items"]) == (200, [])
        finally:
            conn.close()
        plain = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            plain.request("GET", f"{API}/memories")
            with pytest.raises((http.client.HTTPException, ConnectionError)):
                plain.getresponse()
        finally:
            plain.close()
