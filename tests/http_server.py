"""A real `rutter http` server process on a free loopback port, and a plain HTTP client
(`http.client`: it sends exactly the bytes a test gives, duplicate keys and bad lengths
included)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.test_cli import Cli

API = "/api/v1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def code(self) -> str:
        code: str = self.json["error"]["code"]
        return code


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]
    cli: Cli
    control: str
    read: str

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        raw: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """`body` is sent as JSON (`raw`: these bytes as they are); `token` the bearer."""
        sent = dict(headers or {})
        payload = raw
        if body is not None:
            payload = json.dumps(body).encode("utf-8")
        if payload is not None:
            sent.setdefault("Content-Type", "application/json")
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path if path.startswith("/") else f"{API}/{path}", payload, sent)
            response = conn.getresponse()
            text = response.read().decode("utf-8")
            return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        finally:
            conn.close()

    def get(self, path: str, *, token: str | None = None) -> Answer:
        return self.request("GET", path, token=token or self.read)

    def control_call(self, method: str, path: str, body: Any) -> Answer:
        return self.request(method, path, body, token=self.control)


def server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    return env


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"rutter http exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("rutter http did not start listening")


@contextmanager
def serving(cli: Cli, *args: str) -> Iterator[Server]:
    """`rutter http` on the store of `cli`, with a control and a read token made for it."""
    control = cli.json("http", "token", "create", "--scope", "control")["secret"]
    read = cli.json("http", "token", "create", "--scope", "read")["secret"]
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "rutter", "http", "--bind", f"127.0.0.1:{port}", *args],
        env=server_env(cli.home),
        cwd=cli.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(port, process)
        yield Server(port, process, cli, control, read)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
