"""`rutter serve`, `rutter-lsp` and `python -m rutter_lsp` speak LSP over stdio: a raw JSON-RPC
session end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def read_messages(data: bytes) -> list[dict[str, Any]]:
    messages = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def run_session(
    tmp_path: Path, command: list[str], *, shutdown: bool
) -> subprocess.CompletedProcess[bytes]:
    """initialize, initialized, then (if `shutdown`) shutdown, and exit."""
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    ]  # fmt: skip
    if shutdown:
        messages.append({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    messages.append({"jsonrpc": "2.0", "method": "exit"})
    env = {**os.environ, "RUTTER_HOME": str(tmp_path / "home")}
    env.pop("RUTTER_DATABASE_URL", None)
    return subprocess.run(
        command,
        input=b"".join(frame(message) for message in messages),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [
        [str(BIN / "rutter"), "serve"],
        [str(BIN / "rutter-lsp")],
        [sys.executable, "-m", "rutter_lsp"],
        [sys.executable, "-m", "rutter_lsp", "serve"],
    ],
    ids=["rutter-serve", "rutter-lsp", "python-m-rutter_lsp", "python-m-rutter_lsp-serve"],
)
def test_initialize_shutdown_exit(tmp_path: Path, command: list[str]) -> None:
    result = run_session(tmp_path, command, shutdown=True)
    assert result.returncode == 0, result.stderr.decode()
    messages = read_messages(result.stdout)  # nothing but protocol messages on stdout
    responses = {message["id"]: message for message in messages if "id" in message}
    assert responses[1]["result"]["serverInfo"]["name"] == "rutter"
    assert "hoverProvider" in responses[1]["result"]["capabilities"]
    assert responses[2]["result"] is None
    # Once the client takes window/logMessage, routine lines stay off stderr (Neovim records
    # every stderr line as an error).
    assert " INFO " not in result.stderr.decode()


def test_exit_without_shutdown_fails(tmp_path: Path) -> None:
    """LSP: `exit` without a `shutdown` first ends the server with status 1."""
    result = run_session(tmp_path, [str(BIN / "rutter-lsp")], shutdown=False)
    assert result.returncode == 1, result.stderr.decode()
    responses = [message for message in read_messages(result.stdout) if "id" in message]
    assert [message["id"] for message in responses] == [1]
