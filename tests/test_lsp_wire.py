"""What a hostile client can send the language server over stdio (issue 34): messages nested
past the depth bound, frames whose `Content-Length` lies or is given twice, params of the wrong
type, odd cancels. The server answers each with a typed JSON-RPC error that names the field and
the rule, never the value, never a traceback, and answers the next well-formed message.

Each test runs the real server as a subprocess (`python -m rutter_lsp`) and talks to it in raw
bytes, one message at a time: a frame that stalls the reader shows as a later request that is
never answered (every wait is bounded)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rutter_lsp.nesting import MAX_JSON_DEPTH
from rutter_lsp.setup import create_server
from rutter_lsp.transport import MessageLoop

pytestmark = pytest.mark.asyncio(loop_scope="function")

TIMEOUT = 30.0
MARKER = "marker-the-client-typed-4711"
FILE_URI = "file:///nowhere/AGENTS.md"


def frame(message: dict[str, Any] | bytes, *, length: int | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


def request(msg_id: int, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def nested(depth: int, inner: str = "0") -> str:
    """JSON arrays nested `depth` deep around `inner`."""
    return "[" * depth + inner + "]" * depth


class RawSession:
    """The server as a subprocess, fed raw bytes; what it answers, by id, as it arrives."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.by_id: dict[Any, dict[str, Any]] = {}
        self.without_id: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self._stderr = bytearray()
        self._arrived = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._read_messages()),
            asyncio.create_task(self._read_stderr()),
        ]

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def send(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        await stdin.drain()

    async def answer(self, msg_id: int | str) -> dict[str, Any]:
        """The answer to request `msg_id`, waiting for it (a stalled server fails here)."""
        while msg_id not in self.by_id:
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), TIMEOUT)
        return self.by_id[msg_id]

    async def answers_without_id(self, count: int) -> list[dict[str, Any]]:
        while len(self.without_id) < count:
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), TIMEOUT)
        return self.without_id

    async def ask(self, msg_id: int, method: str, params: Any = None) -> dict[str, Any]:
        await self.send(frame(request(msg_id, method, params)))
        return await self.answer(msg_id)

    async def alive(self, msg_id: int) -> None:
        """The server still reads and answers: a request of a method it lacks is answered."""
        assert error_code(await self.ask(msg_id, "rutter/nothing")) == -32601

    async def close(self) -> int:
        await self.send(frame(request(99, "shutdown")))
        await self.answer(99)
        await self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        code = await asyncio.wait_for(self.process.wait(), TIMEOUT)
        await asyncio.wait_for(asyncio.gather(*self._tasks), TIMEOUT)
        return code

    async def _read_messages(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            message = json.loads(await stdout.readexactly(length))
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.without_id.append(message)
            else:
                self.by_id[message["id"]] = message
            self._arrived.set()

    async def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while chunk := await stderr.read(65536):
            self._stderr += chunk


@contextlib.asynccontextmanager
async def raw_session(tmp_path: Path) -> AsyncIterator[RawSession]:
    """An initialized server; on leaving, a proper shutdown and exit (exit code 0)."""
    env = {**os.environ, "RUTTER_HOME": str(tmp_path / "home")}
    env.pop("RUTTER_DATABASE_URL", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rutter_lsp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    session = RawSession(process)
    try:
        initialize: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}
        assert "result" in await session.ask(1, "initialize", initialize)
        await session.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        yield session
        assert await session.close() == 0, session.stderr
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def error_code(answer: dict[str, Any]) -> int:
    assert "error" in answer, answer
    return int(answer["error"]["code"])


def assert_quiet(session: RawSession, *answers: dict[str, Any]) -> None:
    """Nothing the client sent in the answers, the server's log or its notifications, and
    no traceback anywhere."""
    shown = json.dumps([*answers, *session.notifications]) + session.stderr
    assert MARKER not in shown
    assert "Traceback" not in shown
    assert "traceback" not in shown


async def until(predicate: Any, what: str) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(poll(), TIMEOUT)
    except TimeoutError:
        pytest.fail(f"never happened: {what}")


# -- nesting --------------------------------------------------------------------------------


async def test_a_message_nested_to_the_bound_is_read_and_one_level_deeper_is_refused(
    tmp_path: Path,
) -> None:
    async with raw_session(tmp_path) as session:
        # The message and its params are two levels: the value fills the rest.
        at_bound = {"a": json.loads(nested(MAX_JSON_DEPTH - 2))}
        assert error_code(await session.ask(4, "rutter/nothing", at_bound)) == -32601
        past_bound = {"a": json.loads(nested(MAX_JSON_DEPTH - 1))}
        refused = await session.ask(5, "rutter/nothing", past_bound)
        assert error_code(refused) == -32602
        assert f"more than {MAX_JSON_DEPTH} levels deep (max depth)" in refused["error"]["message"]


@pytest.mark.parametrize("depth", [600, 1_000, 50_000])
async def test_a_request_nested_deep_is_invalid_params_and_the_server_goes_on(
    tmp_path: Path, depth: int
) -> None:
    deep = nested(depth, json.dumps(MARKER))
    async with raw_session(tmp_path) as session:
        answers = []
        for msg_id, body in [
            # A typed method (pygls' converter), a rutter request (pydantic) and a command.
            (4, f'{{"textDocument": {{"uri": "{FILE_URI}"}}, "position": {deep}}}'),
            (5, f'{{"scope": "user", "title": "t", "content": {deep}}}'),
            (6, f'{{"command": "rutter.memory.create", "arguments": [{deep}]}}'),
        ]:
            method = {4: "textDocument/hover", 5: "rutter/memory/create"}.get(
                msg_id, "workspace/executeCommand"
            )
            message = (
                f'{{"jsonrpc": "2.0", "id": {msg_id}, "method": "{method}", "params": {body}}}'
            )
            await session.send(frame(message.encode()))
            answers.append(await session.answer(msg_id))
        assert [error_code(answer) for answer in answers] == [-32602] * 3
        assert all("(max depth)" in answer["error"]["message"] for answer in answers)
        await session.alive(7)
        assert_quiet(session, *answers)


async def test_a_notification_nested_deep_is_dropped_with_one_log_line(tmp_path: Path) -> None:
    settings = nested(5_000, json.dumps(MARKER))
    method = "workspace/didChangeConfiguration"
    body = f'{{"jsonrpc": "2.0", "method": "{method}", "params": {{"settings": {settings}}}}}'
    async with raw_session(tmp_path) as session:
        await session.send(frame(body.encode()))
        await session.alive(4)
        assert session.stderr.count("(max depth)") == 1
        assert_quiet(session)


async def test_a_message_nested_deep_outside_its_params_is_an_invalid_request(
    tmp_path: Path,
) -> None:
    deep = nested(5_000)
    async with raw_session(tmp_path) as session:
        for body in [
            f'{{"jsonrpc": "2.0", "id": {deep}, "method": "shutdown"}}',  # the id itself
            deep,  # a batch
            '{"jsonrpc": "2.0", "id": 4, "method": "rutter/nothing", "params": ' + "[" * 5_000,
        ]:
            await session.send(frame(body.encode()))
        answers = await session.answers_without_id(3)
        assert [error_code(answer) for answer in answers] == [-32600] * 3
        # A number Python refuses to read (over 4,300 digits) is answered, not a traceback.
        await session.send(
            frame(b'{"jsonrpc": "2.0", "id": 5, "method": "x", "params": [' + b"7" * 5_000 + b"]}")
        )
        assert [error_code(answer) for answer in await session.answers_without_id(4)][3] == -32700
        await session.alive(6)
        assert_quiet(session, *answers)


# -- framing --------------------------------------------------------------------------------


async def test_an_over_announced_length_does_not_stall_the_next_request(tmp_path: Path) -> None:
    async with raw_session(tmp_path) as session:
        # 60,000 announced for a 2-byte body, then a well-formed request at once.
        await session.send(frame(b"{}", length=60_000) + frame(request(4, "rutter/nothing")))
        assert error_code(await session.answer(4)) == -32601
        await session.alive(5)


async def test_an_over_announced_request_followed_by_nothing_is_answered(tmp_path: Path) -> None:
    async with raw_session(tmp_path) as session:
        # The client waits for this answer before it sends anything else.
        await session.send(frame(request(4, "rutter/nothing"), length=60_000))
        answer = await session.answer(4)
        assert error_code(answer) == -32600
        assert "Content-Length" in answer["error"]["message"]
        await session.alive(5)


@pytest.mark.parametrize("lengths", [("{n}", "60000"), ("60000", "{n}"), ("{n}", "{n}")])
async def test_two_content_length_headers_are_refused_and_reading_goes_on(
    tmp_path: Path, lengths: tuple[str, str]
) -> None:
    def twice(msg_id: int) -> bytes:
        body = json.dumps(request(msg_id, "rutter/nothing")).encode()
        headers = "".join(f"Content-Length: {value.format(n=len(body))}\r\n" for value in lengths)
        return headers.encode() + b"\r\n" + body

    async with raw_session(tmp_path) as session:
        # Followed at once by a well-formed request, then alone (the client waits).
        await session.send(twice(4) + frame(request(5, "rutter/nothing")))
        refused = [await session.answer(4)]
        assert error_code(await session.answer(5)) == -32601
        await session.send(twice(6))
        refused.append(await session.answer(6))
        for answer in refused:
            assert error_code(answer) == -32600
            assert answer["error"]["message"] == "the frame has more than one Content-Length header"
        await session.alive(7)


# -- no echo --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}},
         "'textDocument.uri' must be a string"),
        ({"textDocument": {"uri": FILE_URI}, "position": {"line": MARKER, "character": 0}},
         "'position.line' must be an integer"),
        ({"textDocument": {"uri": FILE_URI}, "position": {"line": -1, "character": 0}},
         "'position' does not fit its type or range"),
        ({"textDocument": MARKER, "position": {"line": 0, "character": 0}}, "'textDocument"),
        ({"textDocument": {"uri": FILE_URI}}, "missing field 'position'"),
    ],
)  # fmt: skip
async def test_a_typed_request_with_params_of_the_wrong_type_names_the_field(
    tmp_path: Path, params: dict[str, Any], field: str
) -> None:
    async with raw_session(tmp_path) as session:
        answer = await session.ask(4, "textDocument/hover", params)
        assert error_code(answer) == -32602
        assert field in answer["error"]["message"]
        assert_quiet(session, answer)


async def test_a_cancel_of_an_id_that_is_not_one_is_one_log_line(tmp_path: Path) -> None:
    async with raw_session(tmp_path) as session:
        for odd_id in [{"nested": MARKER}, [MARKER], True, None]:
            cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": odd_id}}
            await session.send(frame(cancel))
        await session.alive(4)
        assert session.stderr.count("$/cancelRequest") == 4
        assert_quiet(session)


async def test_names_the_client_chose_are_never_echoed(tmp_path: Path) -> None:
    async with raw_session(tmp_path) as session:
        unknown = await session.ask(4, MARKER)
        await session.send(frame({"jsonrpc": "2.0", "method": MARKER, "params": {}}))
        command = await session.ask(
            5, "workspace/executeCommand", {"command": MARKER, "arguments": []}
        )
        assert error_code(unknown) == -32601
        assert error_code(command) == -32602
        assert "'command'" in command["error"]["message"]
        await session.alive(6)
        assert_quiet(session, unknown, command)


async def test_a_wrong_setting_is_named_without_its_value(tmp_path: Path) -> None:
    settings = {"rutter": {"logLevel": MARKER, "agentDiagnostics": MARKER, "databaseUrl": 5}}
    change = {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
              "params": {"settings": settings}}  # fmt: skip
    async with raw_session(tmp_path) as session:
        await session.send(frame(change))

        def shown() -> str:
            return json.dumps([m for m in session.notifications if m["method"] != "$/progress"])

        await until(lambda: all(f"rutter.{key}" in shown() for key in settings["rutter"]),
                    "the three settings are reported")  # fmt: skip
        assert "got another string" in shown()
        assert_quiet(session)


async def test_a_change_to_a_document_never_opened_is_ignored(tmp_path: Path) -> None:
    change = {"textDocument": {"uri": f"file:///{MARKER}/AGENTS.md", "version": 2},
              "contentChanges": [{"text": MARKER}]}  # fmt: skip
    async with raw_session(tmp_path) as session:
        await session.send(frame({"jsonrpc": "2.0", "method": "textDocument/didChange",
                                  "params": change}))  # fmt: skip
        await session.alive(4)
        assert "ignored a change to a document that is not open" in session.stderr
        assert not [m for m in session.notifications if m["method"] == "window/showMessage"]
        assert_quiet(session)


async def test_a_notification_that_fails_is_reported_without_what_was_sent(
    tmp_path: Path,
) -> None:
    # pygls fails on a change to a notebook that is not open (a KeyError naming its URI).
    change = {
        "notebookDocument": {"uri": f"file:///{MARKER}.ipynb", "version": 1},
        "change": {"cells": {"structure": {"array": {"start": 5, "deleteCount": 3}}}},
    }
    progress = {"token": MARKER}  # pygls warns about an unknown token, quoting it
    async with raw_session(tmp_path) as session:
        for method, params in [
            ("notebookDocument/didChange", change),
            ("window/workDoneProgress/cancel", progress),
        ]:
            await session.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))
        await session.alive(4)

        def shown() -> list[str]:
            return [
                m["params"]["message"]
                for m in session.notifications
                if m["method"] == "window/showMessage"
            ]

        await until(shown, "the person is told")
        assert shown() == ["rutter: an internal error; see the language server's log"]
        assert "progress cancel for unknown token <not logged>" in session.stderr
        assert_quiet(session)


class _Collected:
    """A transport that keeps what the server writes."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        pass


async def test_an_unexpected_failure_is_answered_without_its_text_or_traceback() -> None:
    # No handler is known to fail on any input: a failing one stands for the next bug.
    server = create_server()
    try:

        def fails(params: Any) -> None:
            raise ValueError(MARKER)

        untyped: Any = server  # pygls' decorators are untyped
        untyped.feature("rutter/test/fails")(fails)

        transport = _Collected()
        server.protocol.set_writer(transport)
        MessageLoop(server.protocol, io.BytesIO()).handle_message(request(4, "rutter/test/fails"))
        await until(lambda: transport.written, "the request is answered")
        answer = json.loads(transport.written[0].partition(b"\r\n\r\n")[2])
        assert answer["id"] == 4
        assert answer["error"] == {
            "code": -32603, "message": "internal error: see the language server's log"
        }  # fmt: skip
    finally:
        server.session.worker.shutdown()


async def test_the_tcp_server_has_the_same_bounds(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a free port (taken again by the server below)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "RUTTER_HOME": str(tmp_path / "home")}
    env.pop("RUTTER_DATABASE_URL", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rutter_lsp", "--tcp", f"127.0.0.1:{port}",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:

        async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            while True:
                try:
                    return await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.05)

        reader, writer = await asyncio.wait_for(connect(), TIMEOUT)

        async def answer() -> dict[str, Any]:
            header = await reader.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            return dict(json.loads(await reader.readexactly(length)))

        deep = (
            f'{{"jsonrpc": "2.0", "id": 4, "method": "rutter/nothing", "params": {nested(1_000)}}}'
        )
        writer.write(frame(deep.encode()) + frame(request(5, "shutdown")))
        refused, shut = [await asyncio.wait_for(answer(), TIMEOUT) for _ in range(2)]
        assert (refused["id"], error_code(refused)) == (4, -32602)
        assert shut == {"jsonrpc": "2.0", "id": 5, "result": None}
        writer.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
        writer.close()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
