"""The HTTP API on loopback against the CLI (whole processes) and the in-process core, for the
same reads and writes, in the same run.

- read: one memory by ID (`GET /api/v1/memories/{id}`; `rutter context memory show ID
  --json`; `rutter.memory.get`), and one workspace target's instruction snapshot (`GET
  /api/v1/workspaces/demo/project-instructions?target=...`; `rutter context instructions
  --workspace demo --target T --json`; `rutter.instructions.effective`);
- read: a history search (`GET /api/v1/history/search?query=input_stream&workspace_id=demo`;
  `rutter history search input_stream --workspace demo --json`; `rutter.history.search`) over
  50 project memories that all match (a page of 20 hits);
- write: an edit of that memory's content at its current version (`PATCH`; `rutter context
  memory edit ID --version V --content C --json`; `rutter.memory.edit`). Every edit replaces
  a body, so each pays the purge (a truncating WAL checkpoint), on every side.

HTTP requests go one at a time over one keep-alive connection (a client waiting for each
answer), and also from 4 clients at once for reads. Each measure is bounded by a count and a
time budget, whichever ends first. Prints requests/s and the 95th percentile latency of each,
and the load average before and after (the machine is shared).

Usage: python benchmarks/http.py [--count 400] [--cli-count 20] [--seconds 20]
"""

from __future__ import annotations

import os
import sys

# This script is named like the standard library's `http`: run as a script, its directory
# comes first on sys.path and would shadow it.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse
import http.client
import json
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.instructions import EffectiveInstructionsParams
from rutter_core.app.memory import CreateMemoryParams, EditMemoryParams, GetMemoryParams
from rutter_core.app.tokens import CreateTokenParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.store import open_store

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "monorepo"
TARGET = "services/api/internal/parser/input.go"
RUTTER = [sys.executable, "-m", "rutter"]
HISTORY_MEMORIES = 50
SEARCH = "query=input_stream&workspace_id=demo"


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


class Measure:
    def __init__(self, name: str) -> None:
        self.name = name
        self.samples: list[float] = []
        self.wall = 0.0

    def row(self) -> str:
        rate = len(self.samples) / self.wall if self.wall else 0.0
        return (
            f"{self.name:<44} {len(self.samples):>6} {rate:>9.1f} "
            f"{p95(self.samples) * 1000:>9.1f} {statistics.median(self.samples) * 1000:>9.1f}"
        )


def timed(name: str, count: int, seconds: float, one: Callable[[int], object]) -> Measure:
    measure = Measure(name)
    start = time.perf_counter()
    for n in range(count):
        t0 = time.perf_counter()
        one(n)
        measure.samples.append(time.perf_counter() - t0)
        if time.perf_counter() - start > seconds:
            break
    measure.wall = time.perf_counter() - start
    return measure


def concurrent(name: str, clients: int, count: int, seconds: float,
               make: Callable[[], Callable[[int], object]]) -> Measure:  # fmt: skip
    measure = Measure(name)
    lock = threading.Lock()
    start = time.perf_counter()

    def client() -> None:
        one = make()
        for n in range(count // clients):
            t0 = time.perf_counter()
            one(n)
            with lock:
                measure.samples.append(time.perf_counter() - t0)
            if time.perf_counter() - start > seconds:
                break

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    measure.wall = time.perf_counter() - start
    return measure


class Client:
    """One keep-alive connection; fails loudly on any answer but the expected one."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.token = token

    def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, f"/api/v1/{path}", payload, headers)
        response = self.conn.getresponse()
        data = response.read()
        if response.status != expect:
            raise SystemExit(f"{method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("rutter http did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400, help="HTTP and core operations each")
    parser.add_argument("--cli-count", type=int, default=20, help="CLI processes each")
    parser.add_argument("--seconds", type=float, default=20.0, help="time budget of a measure")
    args = parser.parse_args()
    load_before = os.getloadavg()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        root = Path(tmp) / "ws"
        shutil.copytree(EXAMPLE, root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
        env["RUTTER_HOME"] = str(home)
        home.mkdir()
        store = open_store(f"sqlite:///{home / 'rutter.db'}")
        rutter = Rutter(store)
        rutter.workspaces.register(
            RegisterWorkspaceParams(workspace_id="demo", root=str(root), cwd=tmp)
        )
        token = rutter.tokens.create(CreateTokenParams(scope="control"), actor="cli").secret
        made = rutter.memory.create(
            CreateMemoryParams(scope="user", title="bench", content="first"), actor="cli"
        )
        memory_id = made.memory_id
        for n in range(HISTORY_MEMORIES):
            rutter.memory.create(
                CreateMemoryParams(scope="project", workspace_id="demo", title=f"note {n}",
                                   content=f"parse_input_stream step {n}"), actor="cli",
            )  # fmt: skip
        version = [made.version]

        port = free_port()
        server = subprocess.Popen(
            [*RUTTER, "http", "--bind", f"127.0.0.1:{port}"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        results: list[Measure] = []
        try:
            wait_listening(port)
            client = Client(port, token)

            def http_edit(n: int) -> None:
                body = {"expected_version": version[0], "content": f"http {n}"}
                done = client.call("PATCH", f"memories/{memory_id}", body)
                version[0] = done["version"]

            def reader() -> Callable[[int], object]:
                own = Client(port, token)
                return lambda _n: own.call("GET", f"memories/{memory_id}")

            results += [
                timed("HTTP  GET memory", args.count, args.seconds,
                      lambda _n: client.call("GET", f"memories/{memory_id}")),
                concurrent("HTTP  GET memory, 4 clients", 4, args.count, args.seconds, reader),
                timed("HTTP  GET workspace instructions", args.count, args.seconds,
                      lambda _n: client.call(
                          "GET", f"workspaces/demo/project-instructions?target={TARGET}")),
                timed("HTTP  GET history search", args.count, args.seconds,
                      lambda _n: client.call("GET", f"history/search?{SEARCH}")),
                timed("HTTP  PATCH memory (edit, purge)", args.count, args.seconds, http_edit),
            ]  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=30)

        def core_edit(n: int) -> None:
            done = rutter.memory.edit(
                EditMemoryParams(id=memory_id, version=version[0], content=f"core {n}"),
                actor="cli",
            )
            version[0] = done.version

        results += [
            timed("core  memory.get", args.count, args.seconds,
                  lambda _n: rutter.memory.get(GetMemoryParams(id=memory_id))),
            timed("core  instructions.effective", args.count, args.seconds,
                  lambda _n: rutter.instructions.effective(
                      EffectiveInstructionsParams(target=TARGET, workspace_id="demo"))),
            timed("core  history.search", args.count, args.seconds,
                  lambda _n: rutter.history.search(
                      HistorySearchParams(query="input_stream", workspace_id="demo"))),
            timed("core  memory.edit (purge)", args.count, args.seconds, core_edit),
        ]  # fmt: skip

        def cli(*words: str) -> Any:
            done = subprocess.run([*RUTTER, *words, "--json"], env=env, cwd=root,
                                  capture_output=True, text=True, check=True)  # fmt: skip
            return json.loads(done.stdout)

        def cli_edit(n: int) -> None:
            done = cli("context", "memory", "edit", memory_id, "--version", str(version[0]),
                       "--content", f"cli {n}")  # fmt: skip
            version[0] = done["version"]

        results += [
            timed("CLI   context memory show", args.cli_count, args.seconds,
                  lambda _n: cli("context", "memory", "show", memory_id)),
            timed("CLI   context instructions --target", args.cli_count, args.seconds,
                  lambda _n: cli("context", "instructions", "--workspace", "demo",
                                 "--target", TARGET)),
            timed("CLI   history search", args.cli_count, args.seconds,
                  lambda _n: cli("history", "search", "input_stream", "--workspace", "demo")),
            timed("CLI   context memory edit", args.cli_count, args.seconds, cli_edit),
        ]  # fmt: skip
        store.close()

    load_after = os.getloadavg()
    print(f"{'operation':<44} {'count':>6} {'req/s':>9} {'p95 ms':>9} {'p50 ms':>9}")
    for measure in results:
        print(measure.row())
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
          f"({os.cpu_count()} cores)")  # fmt: skip


if __name__ == "__main__":
    main()
