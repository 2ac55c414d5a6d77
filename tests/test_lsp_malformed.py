"""Malformed messages to the language server over stdio: every request is answered with the
right JSON-RPC error, the framing recovers, and nothing the client sent reaches stderr.

Each session is the real server as a subprocess (`python -m rutter_lsp`) fed raw bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.lsp_wire import (
    SECRET_MARKER,
    error_code,
    frame,
    session,
)


def test_a_body_that_is_not_json_is_a_parse_error(tmp_path: Path) -> None:
    _by_id, without_id, stderr = session(tmp_path, frame(b"{not json " + SECRET_MARKER.encode()))
    assert [error_code(m) for m in without_id] == [-32700]
    assert SECRET_MARKER not in stderr
    assert "Traceback" not in stderr


def test_invalid_utf8_body_is_a_parse_error(tmp_path: Path) -> None:
    _, without_id, _ = session(tmp_path, frame(b'{"jsonrpc": "2.0", "id": 3, "method": "\xff"}'))
    assert [error_code(m) for m in without_id] == [-32700]


@pytest.mark.parametrize(
    ("message", "answer_id"),
    [
        ({"jsonrpc": "2.0", "id": 5, "method": 7}, 5),
        ({"jsonrpc": "2.0", "id": 6, "method": None}, 6),
        ({"jsonrpc": "1.0", "id": 7, "method": "shutdown"}, 7),
        ({"id": 8, "method": "shutdown"}, 8),
        ({"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": "top"}, 9),
        ({"jsonrpc": "2.0", "id": {"nested": 1}, "method": "shutdown"}, None),
        ({"jsonrpc": "2.0", "id": 10}, 10),
    ],
)
def test_an_invalid_request_is_answered_invalid_request(
    tmp_path: Path, message: dict[str, Any], answer_id: int | None
) -> None:
    by_id, without_id, stderr = session(tmp_path, frame(message))
    answer = by_id[answer_id] if answer_id is not None else without_id[0]
    assert error_code(answer) == -32600
    assert "Traceback" not in stderr


def test_a_batch_is_an_invalid_request(tmp_path: Path) -> None:
    _, without_id, _ = session(tmp_path, frame(b'[{"jsonrpc": "2.0", "id": 3, "method": "x"}]'))
    assert [error_code(m) for m in without_id] == [-32600]


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        (
            {"textDocument": {"uri": "file:///x.py"}, "position": "top"},
            {"field": "position.line", "rule": "type_or_range"},
        ),
        (
            {"textDocument": {"uri": "file:///x.py"}, "position": {"line": "one", "character": 0}},
            {"field": "position.line", "rule": "int_type"},
        ),
        (
            {"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": 0}},
            {"field": "position", "rule": "type_or_range"},
        ),
        ({"textDocument": {"uri": "file:///x.py"}}, {"field": "position", "rule": "missing"}),
    ],
)
def test_params_that_do_not_fit_a_typed_method_are_invalid_params(
    tmp_path: Path, params: dict[str, Any], problem: dict[str, Any]
) -> None:
    request = {"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": params}
    by_id, _, stderr = session(tmp_path, frame(request))
    assert error_code(by_id[4]) == -32602
    assert "Traceback" not in stderr
    # The error document every surface gives `invalid_params`: its problems by field and rule.
    data = by_id[4]["error"]["data"]
    assert data["code"] == "invalid_params"
    assert data["message"] == by_id[4]["error"]["message"]
    assert problem in data["details"]["problems"]
    assert "top" not in json.dumps(data)
    assert "one" not in json.dumps(data)


def test_a_rutter_request_with_invalid_params_logs_no_traceback_and_no_content(
    tmp_path: Path,
) -> None:
    request = {
        "jsonrpc": "2.0", "id": 4, "method": "rutter/memory/create",
        "params": {"scope": "user", "title": SECRET_MARKER, "content": SECRET_MARKER,
                   "retention": "forever-and-" + SECRET_MARKER, "actor": "root"},
    }  # fmt: skip
    by_id, _, stderr = session(tmp_path, frame(request))
    assert error_code(by_id[4]) == -32602
    assert "Traceback" not in stderr
    assert SECRET_MARKER not in stderr


def test_a_length_that_announces_too_much_does_not_swallow_the_next_request(
    tmp_path: Path,
) -> None:
    first = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "rutter/nothing"}).encode()
    # 30 bytes more than the body: the read runs into the next message's header.
    middle = frame(first, length=len(first) + 30) + frame(
        {"jsonrpc": "2.0", "id": 5, "method": "rutter/nothing-either"}
    )
    by_id, _, _ = session(tmp_path, middle)
    # The cut frame is malformed: answered with its id, never acted on.
    assert error_code(by_id[4]) == -32600
    assert error_code(by_id[5]) == -32601


def test_a_length_that_announces_too_little_is_a_parse_error_and_reading_goes_on(
    tmp_path: Path,
) -> None:
    first = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "rutter/nothing"}).encode()
    middle = frame(first, length=len(first) - 10) + frame(
        {"jsonrpc": "2.0", "id": 5, "method": "rutter/nothing-either"}
    )
    by_id, without_id, _ = session(tmp_path, middle)
    assert [error_code(m) for m in without_id] == [-32700]
    assert error_code(by_id[5]) == -32601


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: abc\r\n\r\n", b"Content-Length: -5\r\n\r\n", b"X-Nothing: 1\r\n\r\n",
     b"Content-Length: 99999999999999\r\n\r\n"],
)  # fmt: skip
def test_a_malformed_header_block_is_a_parse_error_and_reading_goes_on(
    tmp_path: Path, header: bytes
) -> None:
    middle = header + frame({"jsonrpc": "2.0", "id": 5, "method": "rutter/nothing"})
    by_id, without_id, _ = session(tmp_path, middle)
    assert [error_code(m) for m in without_id] == [-32700]
    assert error_code(by_id[5]) == -32601
