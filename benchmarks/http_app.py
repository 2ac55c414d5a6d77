"""The HTTP application's own cost per request, in process: `rutter_http.app.build_app` driven
through ASGI directly (no socket, no client, no uvicorn), so what is measured is the framework,
the bearer check, the body or query reading and validation, the app call and the JSON answer.

Reported as CPU time per request (the process's, all threads: the app call runs in a worker
thread) and as requests per CPU second, which a busy shared machine disturbs far less than
wall-clock rates; the wall-clock rate is printed beside it. Baseline in the same run: the core
call alone (`Rutter(store)`, what the endpoint calls). Requests: one memory by ID (GET), a
history search (GET with a query), a memory edit (PATCH of the title, a JSON body read
strictly; the edit pays the purge, mostly waiting on fsync, not CPU) and a refusal (422, an
unknown field).

Usage: python benchmarks/http_app.py [--count 2000]
"""

from __future__ import annotations

import os
import sys

# Run as a script, this directory comes first on sys.path, and its `http.py` would shadow the
# standard library's `http` (which the server's modules import).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.memory import CreateMemoryParams, GetMemoryParams
from rutter_core.app.tokens import CreateTokenParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.store import open_store
from rutter_http.app import build_app
from rutter_http.hosts import HostRule

GOAL = "the framework adds at most 1 ms of CPU a request over the core call"


class Driver:
    """One ASGI application called as a server would, one request at a time."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def call(self, method: str, path: str, body: bytes = b"") -> int:
        target, _, query = path.partition("?")
        headers = [(b"host", b"127.0.0.1:8787"), (b"authorization", b"Bearer " + self.token)]
        if body:
            headers += [(b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())]  # fmt: skip
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": target, "raw_path": target.encode(),
            "query_string": query.encode(), "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8787), "state": {},
        }  # fmt: skip
        sent = False
        status = 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await self.app(scope, receive, send)
        return status


def measure(name: str, count: int, one: Callable[[int], object]) -> str:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for n in range(count):
        one(n)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return (
        f"{name:<40} {count:>6} {count / cpu:>10.1f} {cpu / count * 1000:>9.3f} "
        f"{count / wall:>10.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        store = open_store(f"sqlite:///{Path(tmp) / 'rutter.db'}")
        rutter = Rutter(store)
        rutter.workspaces.register(
            RegisterWorkspaceParams(workspace_id="demo", root=str(root), cwd=tmp)
        )
        token = rutter.tokens.create(CreateTokenParams(scope="control"), actor="cli").secret
        memory = rutter.memory.create(
            CreateMemoryParams(scope="user", title="bench", content="first"), actor="cli"
        )
        for n in range(20):
            rutter.memory.create(
                CreateMemoryParams(scope="project", workspace_id="demo", title=f"m{n}",
                                   content=f"parse_input_stream step {n}"), actor="cli",
            )  # fmt: skip
        app = build_app(rutter, HostRule.of("127.0.0.1"))
        driver = Driver(app, token)
        loop = asyncio.new_event_loop()
        version = [memory.version]

        def run(method: str, path: str, body: Any = None, expect: int = 200) -> None:
            raw = b"" if body is None else json.dumps(body).encode()
            status = loop.run_until_complete(driver.call(method, f"/api/v1/{path}", raw))
            assert status == expect, (method, path, status)

        def edit(n: int) -> None:
            run("PATCH", f"memories/{memory.memory_id}",
                {"expected_version": version[0], "title": f"t{n}"})  # fmt: skip
            version[0] += 1

        count = args.count
        one = f"memories/{memory.memory_id}"
        rows = [
            measure("HTTP  GET memory", count, lambda _n: run("GET", one)),
            measure("HTTP  GET history search", count // 4, lambda _n: run(
                "GET", "history/search?query=input_stream&workspace_id=demo")),
            measure("HTTP  PATCH memory (edit, purge)", count // 4, edit),
            measure("HTTP  POST memory, unknown field (422)", count, lambda _n: run(
                "POST", "memories", {"scope": "user", "title": "t", "content": "c", "x": 1},
                expect=422)),
            measure("core  memory.get", count,
                    lambda _n: rutter.memory.get(GetMemoryParams(id=memory.memory_id))),
            measure("core  history.search", count // 4, lambda _n: rutter.history.search(
                HistorySearchParams(query="input_stream", workspace_id="demo"))),
        ]  # fmt: skip
        loop.close()
        store.close()
    print(f"{'operation':<40} {'count':>6} {'req/CPU s':>10} {'CPU ms':>9} {'req/s':>10}")
    for row in rows:
        print(row)
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} ({os.cpu_count()} cores); goal: {GOAL}")


if __name__ == "__main__":
    main()
