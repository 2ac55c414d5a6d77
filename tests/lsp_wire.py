"""The language server driven with raw bytes on stdin (this module holds no tests): framed messages
in, the answers out (`session`, `frame`, `error_code`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SECRET_MARKER = "marker-the-client-typed-4711"


def frame(message: dict[str, Any] | bytes, *, length: int | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


def messages_out(data: bytes) -> list[dict[str, Any]]:
    found = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        found.append(json.loads(rest[:length]))
        data = rest[length:]
    return found


INITIALIZE = frame(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"processId": None, "rootUri": None, "capabilities": {}}}
) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})  # fmt: skip
SHUTDOWN = frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


def session(
    tmp_path: Path, middle: bytes
) -> tuple[dict[Any, dict[str, Any]], list[dict[str, Any]], str]:
    """Run initialize, `middle`, shutdown and exit; the answers by id, the answers without
    an id, and stderr."""
    env = {**os.environ, "RUTTER_HOME": str(tmp_path / "home")}
    env.pop("RUTTER_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "rutter_lsp"],
        input=INITIALIZE + middle + SHUTDOWN + EXIT,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    answers = [m for m in messages_out(done.stdout) if "method" not in m]
    by_id = {m["id"]: m for m in answers if m.get("id") is not None}
    without_id = [m for m in answers if m.get("id") is None]
    stderr = done.stderr.decode("utf-8", "replace")
    assert 99 in by_id, f"shutdown was never answered: the framing did not recover\n{stderr}"
    assert done.returncode == 0
    return by_id, without_id, stderr


def error_code(answer: dict[str, Any]) -> int:
    assert "error" in answer, answer
    return int(answer["error"]["code"])
