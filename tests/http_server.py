"""A real `rutter http` server process on a free loopback port, and a plain HTTP client
(`http.client`: it sends exactly the bytes a test gives, duplicate keys and bad lengths
included)."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.testing import Cli, write_tree

API = "/api/v1"


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


def wait_serving(log: Path, process: subprocess.Popen[bytes]) -> int:
    """The port the server says it serves on (it binds port 0: the system picks a free one),
    once that line is in its log."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            match = re.match(
                r"rutter http: serving https?://127\.0\.0\.1:(\d+)/api/v1( with \d+ workers)?$",
                line,
            )
            if match:
                return int(match.group(1))
        if process.poll() is not None:
            raise AssertionError(f"rutter http exited with {process.returncode}: {log.read_text()}")
        time.sleep(0.05)
    raise AssertionError("rutter http did not start serving")


@contextmanager
def serving(cli: Cli, *args: str) -> Iterator[Server]:
    """`rutter http` on the store of `cli`, with a control and a read token made for it."""
    control = cli.json("http", "token", "create", "--scope", "control")["secret"]
    read = cli.json("http", "token", "create", "--scope", "read")["secret"]
    cli.home.mkdir(parents=True, exist_ok=True)
    log = cli.home / f"http-{time.monotonic_ns()}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "rutter", "http", "--bind", "127.0.0.1:0", *args],
            env=cli.env(),
            cwd=cli.cwd,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        port = wait_serving(log, process)
        yield Server(port, process, cli, control, read)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class ServedRun:
    """A served store holding workspace `demo` and one run in it."""

    server: Server
    cli: Cli
    run: dict[str, Any]


@contextmanager
def served_run(
    base: Path,
    tree: Mapping[str, str | bytes],
    prepare: Callable[[Cli, dict[str, Any]], None] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    database_url: str | None = None,
) -> Iterator[ServedRun]:
    """`tree` written as workspace `demo` under `base`, a run created in it, `prepare(cli, run)`
    run, then `rutter http` serving that store (`database_url`'s, else the home's) until the
    block ends (`env` set for the CLI and the server)."""
    root = (base / "ws").resolve()
    write_tree(root, dict(tree))
    cli = Cli(base / "home", root, env, database_url=database_url)
    cli.json("workspace", "register", "demo", str(root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    if prepare is not None:
        prepare(cli, run)
    with serving(cli) as server:
        yield ServedRun(server, cli, run)


def workers_of(process: subprocess.Popen[bytes], expected: int = 2) -> list[int]:
    """The server processes a `rutter http --workers N` parent started (its spawned children
    that serve; not the interpreter's resource tracker), once `expected` of them are there
    (the parent listens before they have started)."""
    deadline = time.monotonic() + 60
    while True:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        found = [
            int(child)
            for child in children
            if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes()
        ]
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _port(hex_address: str) -> int:
    return int(hex_address.rsplit(":", 1)[1], 16)


def serving_worker(port: int, conn: http.client.HTTPConnection, workers: list[int]) -> int:
    """Which of `workers` holds the server's end of `conn` (an open keep-alive connection to
    the server on `port`): the kernel's table of TCP connections names the socket's inode,
    and the worker that accepted it has a descriptor on that inode (Linux's /proc)."""
    assert conn.sock is not None, "the connection is not open"
    client = conn.sock.getsockname()[1]
    inodes = {
        fields[9]
        for fields in (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
        if _port(fields[1]) == port and _port(fields[2]) == client
    }
    assert len(inodes) == 1, f"no single server end for client port {client}: {inodes}"
    socket = f"socket:[{inodes.pop()}]"
    holders = []
    for pid in workers:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if str(fd.readlink()) == socket:
                    holders.append(pid)
                    break
            except FileNotFoundError:  # closed meanwhile
                continue
    assert len(holders) == 1, f"{socket} is held by {holders} of the workers {workers}"
    return holders[0]
