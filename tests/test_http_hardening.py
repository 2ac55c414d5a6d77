"""`rutter http` against hostile input (issue 34), end to end on a real server process, over
raw sockets and `http.client`: bodies nested too deep and numbers out of range are typed 400s
(never a 500 and a traceback), the `Host` header must name the server (DNS rebinding), a bearer
is still required with a good one, and a client that disconnects mid-body is one log line.

Every test on a served store runs on both engines (each request's bearer is read from the
store, and a refused write must leave it as it was); the checks of a bind's Host rule and of
`--allow-host` never reach a store and run once."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.http_server import API, Answer, Server, serving
from tests.testing import Cli

MARK = "hardening-echo-marker-5c1a"
"""Sent inside refused bodies and headers: no error may repeat it."""

pytestmark = pytest.mark.both_dialects


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory, module_store_url: str) -> Cli:
    base = tmp_path_factory.mktemp("http-hardening")
    root = (base / "ws").resolve()
    write_tree(root, {"AGENTS.md": "root rules\n"})
    made = Cli(base / "home", root, database_url=module_store_url)
    made.json("workspace", "register", "demo", str(root))
    return made


@pytest.fixture(scope="module")
def server(cli: Cli) -> Iterator[Server]:
    with serving(cli, "--allow-host", "rutter.internal", "--allow-host", "Box.Example.") as made:
        yield made


def memory(server: Server) -> dict[str, Any]:
    made = server.control_call("POST", "memories", {"scope": "user", "title": "t", "content": "c"})
    assert made.status == 201, made.text
    document: dict[str, Any] = made.json
    return document


def raw_exchange(port: int, request: bytes) -> tuple[int, dict[str, Any]]:
    """One request written to a socket as these exact bytes; the status and the JSON body."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def refused(answer: Answer, status: int, code: str) -> dict[str, Any]:
    assert (answer.status, answer.code) == (status, code), answer.text
    assert MARK not in answer.text
    assert "Traceback" not in answer.text
    error: dict[str, Any] = answer.json["error"]
    return error


# -- nesting ------------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [65, 600, 100_000])
def test_a_body_nested_too_deep_is_a_typed_400(server: Server, levels: int) -> None:
    content = "[" * levels + json.dumps(MARK) + "]" * levels
    body = f'{{"scope": "user", "title": "t", "content": {content}}}'.encode()
    answer = server.request("POST", "memories", raw=body, token=server.control)
    error = refused(answer, 400, "nesting_too_deep")
    assert error["details"] == {"max_depth": 64}
    # Within the bound the body parses and is refused for what it says, not its depth.
    shallow = "[" * 60 + "1" + "]" * 60
    answer = server.request(
        "POST", "memories", raw=f'{{"scope": "user", "title": "t", "content": {shallow}}}'.encode(),
        token=server.control,
    )  # fmt: skip
    assert (answer.status, answer.code) == (422, "invalid_params")


# -- a NUL in a lookup -----------------------------------------------------------------------


RUN = "run_01M93HMZNH3S717SCNJD937YKF"
SESSION = "ses_01M93HMZNH3S717SCNJD937YKF"


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("GET", "workspaces/demo%00{mark}/project-instructions?target=.", None, 404,
         "not_registered"),
        ("POST", "memories", {"scope": "project", "workspace_id": "demo\x00{mark}", "title": "t",
                              "content": "c"}, 404, "not_registered"),
        ("GET", "memories/export?scope=project&workspace_id=demo%00{mark}", None, 404,
         "not_registered"),
        ("GET", "memory-candidates?workspace_id=demo%00{mark}", None, 404, "not_registered"),
        ("GET", f"runs/{RUN}%00{{mark}}/pins", None, 404, "run_not_found"),
        ("POST", f"runs/{RUN}%00{{mark}}/context/assemble", {}, 404, "run_not_found"),
        ("GET", f"sessions/{SESSION}%00{{mark}}/tree", None, 404, "session_not_found"),
    ],
)  # fmt: skip
def test_a_nul_in_an_id_finds_nothing_as_on_every_engine(
    server: Server, method: str, path: str, body: dict[str, Any] | None, status: int, code: str
) -> None:
    """No record's ID holds a NUL, and PostgreSQL cannot even compare text with one: the
    lookup finds nothing, typed as it is for any unknown ID, on both engines (not a 500)."""
    if body is not None:
        body = {k: v.format(mark=MARK) if isinstance(v, str) else v for k, v in body.items()}
    answer = server.request(method, path.format(mark=MARK), body, token=server.control)
    refused(answer, status, code)


def test_a_nul_in_a_filter_lists_nothing(server: Server) -> None:
    for path, key in ((f"memories?scope=project&workspace_id=demo%00{MARK}", "items"),
                      (f"pin-proposals?workspace_id=demo%00{MARK}", "proposals")):  # fmt: skip
        answer = server.get(path)
        assert (answer.status, answer.json[key]) == (200, []), answer.text


# -- numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "number",
    [
        "9" * 4301,  # over Python's 4,300 digits of int() from text
        "-" + "1" * 5000,
        str(2**63),  # over SQLite's 64-bit integers
        str(-(2**63) - 1),
        "1e400",  # a float that overflows to infinity
        "-1e400",
    ],
)
def test_a_number_out_of_range_is_a_typed_400(server: Server, number: str) -> None:
    target = memory(server)
    body = f'{{"expected_version": {number}, "title": "t"}}'.encode()
    answer = server.request("PATCH", f"memories/{target['id']}", raw=body, token=server.control)
    error = refused(answer, 400, "number_out_of_range")
    assert error == {  # the rule and its bounds, never the number sent
        "code": "number_out_of_range",
        "message": "a number sent is out of range: integers are 64-bit, floats finite",
        "details": {"min_integer": -(2**63), "max_integer": 2**63 - 1},
    }
    # Nothing changed.
    assert server.get(f"memories/{target['id']}").json == target


def test_numbers_in_range_still_work(server: Server) -> None:
    target = memory(server)
    edited = server.control_call(
        "PATCH", f"memories/{target['id']}", {"expected_version": 1, "title": "t2"}
    )
    assert edited.status == 200, edited.text
    stale = server.control_call(
        "PATCH", f"memories/{target['id']}", {"expected_version": 2**63 - 1, "title": "t3"}
    )
    assert stale.status == 409  # in range: a version, just not the current one


# -- Host ---------------------------------------------------------------------------------------


def test_a_host_that_does_not_name_the_server_is_refused_before_the_bearer(
    server: Server,
) -> None:
    for host in (
        "evil.example",
        f"{MARK}.example:{server.port}",
        "rutter.internal.evil.example",
        "127.0.0.1.evil.example",
        "10.0.0.1",  # an address, but not the one served
        "",
    ):
        for token in (server.read, None):
            answer = server.request("GET", "memories", token=token, headers={"Host": host})
            error = refused(answer, 400, "host_not_allowed")
            assert error["hint"] == {"fix": "allow_host"}
    # Every route, the unknown ones and the OpenAPI document included.
    for path in ("/api/v1/openapi.json", "/api/v1/nowhere", "/"):
        answer = server.request("GET", path, headers={"Host": "evil.example"})
        refused(answer, 400, "host_not_allowed")
    # A mutation: refused before its body is read; nothing is written.
    before = server.get("memories?scope=user&limit=500").json["items"]
    answer = server.request(
        "POST", "memories", {"scope": "user", "title": MARK, "content": "c"},
        token=server.control, headers={"Host": "evil.example"},
    )  # fmt: skip
    refused(answer, 400, "host_not_allowed")
    assert server.get("memories?scope=user&limit=500").json["items"] == before


def test_the_bound_address_localhost_and_allowed_names_are_served_with_a_bearer(
    server: Server,
) -> None:
    for host in (
        f"127.0.0.1:{server.port}",
        "127.0.0.1",
        f"localhost:{server.port}",
        "LOCALHOST",
        "rutter.internal",
        f"Rutter.Internal:{server.port}",
        "box.example",  # allowed as `Box.Example.`: names are case-insensitive, dot or not
        "box.example.",
    ):
        answer = server.request("GET", "memories", token=server.read, headers={"Host": host})
        assert answer.status == 200, (host, answer.text)
        # A good Host does not stand in for the bearer.
        assert server.request("GET", "memories", headers={"Host": host}).status == 401


def test_host_over_raw_sockets(server: Server) -> None:
    auth = f"Authorization: Bearer {server.read}\r\n".encode()
    path = f"GET {API}/memories".encode()
    # HTTP/1.0 may omit Host: that names no server either.
    status, document = raw_exchange(server.port, path + b" HTTP/1.0\r\n" + auth + b"\r\n")
    assert (status, document["error"]["code"]) == (400, "host_not_allowed")
    status, document = raw_exchange(
        server.port,
        path + b" HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n" + auth + b"\r\n",
    )
    assert (status, document["error"]["code"]) == (400, "host_not_allowed")
    status, document = raw_exchange(
        server.port,
        path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + auth + b"\r\n",
    )
    assert status == 200
    assert "items" in document


def test_an_allowed_name_is_a_name(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    for bad in ("http://x.example", "x.example:80", "a b", "", "x" * 300, "*"):
        refusal = cli.json("http", "--bind", "127.0.0.1:0", "--allow-host", bad, code=2)
        assert refusal["error"]["code"] == "invalid_allow_host", bad


@pytest.mark.parametrize(
    ("bound", "header", "admitted"),
    [
        ("127.0.0.1", "127.0.0.1:8787", True),
        ("127.0.0.1", "127.0.0.2", True),  # any loopback address: it cannot be rebound
        ("127.0.0.1", "[::1]:8787", True),
        ("127.0.0.1", "localhost.", True),
        ("127.0.0.1", "localhost.evil.example", False),
        ("127.0.0.1", "[::1", False),
        ("127.0.0.1", "127.0.0.1:http", False),
        ("::1", "[::1]:8787", True),
        ("::1", "[::2]", False),
        ("localhost", "127.0.0.1", True),
        ("0.0.0.0", "192.0.2.7:443", True),  # a wildcard bind: any address, no name
        ("0.0.0.0", "rebound.example", False),
        ("192.0.2.7", "192.0.2.7", True),
        ("192.0.2.7", "localhost", False),  # off loopback, localhost is another machine's
        ("192.0.2.7", "rutter.internal:443", True),  # allowed below
        ("192.0.2.7", "RUTTER.internal.", True),
    ],
)
def test_which_hosts_a_bind_admits(bound: str, header: str, admitted: bool) -> None:
    from rutter_http.hosts import HostRule

    assert HostRule.of(bound, ["rutter.internal"]).admits(header) is admitted


# -- a client that goes away --------------------------------------------------------------------


def test_a_client_that_disconnects_mid_body_is_one_log_line(tmp_path: Path, store_url: str) -> None:
    cli = Cli(tmp_path / "home", tmp_path, database_url=store_url)
    with serving(cli) as server:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
                sock.sendall(
                    f"POST {API}/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {server.control}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                    '{"scope": "user", "ti'.encode()
                )
                # Meanwhile other clients are served; then this one goes away mid-body.
                assert server.get("memories").status == 200
        [log] = cli.home.glob("http-*.log")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = log.read_text(encoding="utf-8").splitlines()
            if sum("disconnected" in line for line in lines) >= 3:
                break
            time.sleep(0.05)
        # Still serving.
        assert server.get("memories").status == 200
    lines = log.read_text(encoding="utf-8").splitlines()
    assert "Traceback" not in "\n".join(lines)
    gone = [line for line in lines if "disconnected" in line]
    assert (
        gone
        == [
            f"rutter http: POST {API}/memories: the client disconnected before its request body "
            "was complete"
        ]
        * 3
    ), lines


def test_a_malformed_body_is_still_400_and_a_wrong_length_header_too(server: Server) -> None:
    """The numbers' and depth's checks leave the other refusals as they were."""
    for raw in (b"{not json", b'{"a": 1, "a": 2}', b"[1]"):
        answer = server.request("POST", "memories", raw=raw, token=server.control)
        refused(answer, 400, "invalid_json")
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest("POST", f"{API}/memories")
        conn.putheader("Authorization", f"Bearer {server.control}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", "lots")
        conn.endheaders()
        status = conn.getresponse().status
    finally:
        conn.close()
    assert status == 400
