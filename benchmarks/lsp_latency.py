"""Language server latency against the same server's round trip for a trivial request.

A scripted LSP client (raw JSON-RPC with Content-Length framing over the server's stdio; no
pygls on this side, so the client adds as little as possible to what it measures) starts
`python -m rutter_lsp.server` with a private RUTTER_HOME, initializes it on the discovery
benchmark's synthetic monorepo (`benchmarks/discovery.py: build_repo`) with the capabilities a
real editor announces (dynamic registration of `workspace/didChangeWatchedFiles`,
`workspace/configuration`, work-done progress, code-lens refresh, push diagnostics), answers
the server's requests to the client, and measures:

1. Latency of `rutter/effectiveInstructions` for the depth-12 targets, against the round trip
   of `textDocument/codeLens` on a plain `.go` file measured interleaved in the same run (the
   order of the pair alternates). That request is answered on the event loop with `null` after
   the lookup every request makes (which folder, which kind of file): transport, framing,
   JSON, pygls dispatch and (de)serialisation, nothing else; it is the cheapest real request
   the server has (hover on the same file takes the same path with a larger params object and
   measured no cheaper). Cold is the first request per target, after one request at the root
   has paid the process's one-off costs (so the root's files are cached, as in any running
   server); warm is every later one. The targets are not opened for this part: the request
   reads the disk, not the buffers, and didOpen would start index rebuilds that compete with
   the measurement. The pair is measured again with the documents of part 2 open (idle).
2. Change propagation with `--open` documents open (source files spread over the monorepo,
   the targets, and the instruction files of the root and of one chain): the root AGENTS.md
   is rewritten on disk and `workspace/didChangeWatchedFiles` sent (only if a registered
   watcher's glob matches it, as a client would), then the time to `rutter/instructionsChanged`
   and to the last `textDocument/publishDiagnostics` of the change (no more for 0.3 s);
   meanwhile one trivial request and one effectiveInstructions request are kept in flight, a
   few milliseconds apart, and their p95 and max show whether the server stays responsive.
   Each of the `--changes` rounds is made twice: (a) the notification sent right after the
   write, as editors send it (the round includes the reader's settle wait: a file stamped
   less than `SETTLED_MS` ago is read again once it is that old, so a write in progress is
   refused rather than delivered half-written), and (b) the notification sent once the file's
   stamp is `SETTLED_MS` old, which is propagation proper and what the goal is about. Medians
   per variant, each round started 2.2 s after the previous one so that the files are past
   the reader's racy window again. After each round the syscall floor of the affected paths
   (an lstat of each directory on the way to an open document, one read of each instruction
   file they hold) is timed in the same process, and the ratio is taken against it.

Times are client round trips (perf_counter from writing the request to having parsed the
answer). No timing is asserted: this prints numbers.

With `--runs N`, N active runs are created on the targets before the server starts: each
change then also re-inspects every run and publishes its drift (compare with `--runs 0`).

Usage: python benchmarks/lsp_latency.py [--dirs 10000] [--files 100000] [--rounds 20]
       [--open 1000] [--changes 5] [--runs 0] [--profile PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

from discovery import build_repo

from rutter_core.app.facade import machine_sources
from rutter_core.discovery.fsread import DEFAULT_RACY_WINDOW_NS, SETTLE_NS, SETTLED_MS
from rutter_core.workspaces.machine import machine_id

Json = dict[str, Any]

EFFECTIVE: Final = "rutter/effectiveInstructions"
CHANGED: Final = "rutter/instructionsChanged"
PUBLISH: Final = "textDocument/publishDiagnostics"
WATCHED: Final = "workspace/didChangeWatchedFiles"
TRIVIAL: Final = "textDocument/codeLens"
FILE_CHANGED: Final = 2  # FileChangeType.Changed
PROBE_INTERVAL: Final = 0.005
"""Pause between a prober's answer and its next request during a change (a busy editor)."""
QUIET_SECONDS: Final = 0.3
"""After instructionsChanged: no further diagnostics for this long ends a change round."""
TIMEOUT: Final = 300.0
INSTRUCTION_NAMES: Final = frozenset({"AGENTS.md", "AGENTS.override.md", "CLAUDE.md"})
HERE: Final = Path(__file__).resolve().parent
CLOCK_TICK_NS: Final = 5_000_000
"""Filesystem timestamps come from a coarse clock that lags by up to a tick (~4 ms)."""


class RpcError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Notice:
    at: float
    method: str
    params: Any


@dataclass
class Client:
    """Just enough of an LSP client: requests, notifications, answers to server requests."""

    process: asyncio.subprocess.Process
    root_uri: str
    notices: list[Notice] = field(default_factory=list)
    registrations: list[Json] = field(default_factory=list)
    server_requests: Counter[str] = field(default_factory=Counter)
    log_messages: list[Json] = field(default_factory=list)
    _next_id: int = 0
    _pending: dict[int, asyncio.Future[tuple[float, Json]]] = field(default_factory=dict)
    _waiters: list[tuple[Callable[[Notice], bool], asyncio.Future[Notice]]] = field(
        default_factory=list
    )
    _reader: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read())

    # -- sending ---------------------------------------------------------------------------

    def _send(self, message: Json) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        body = json.dumps(message, separators=(",", ":")).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    async def request(self, method: str, params: Any) -> tuple[Any, float]:
        """The result and the round trip in seconds."""
        self._next_id += 1
        msg_id = self._next_id
        future: asyncio.Future[tuple[float, Json]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        start = time.perf_counter()
        message: Json = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:  # JSON-RPC: params are an object or an array, or absent
            message["params"] = params
        self._send(message)
        assert self.process.stdin is not None
        await self.process.stdin.drain()
        end, message = await asyncio.wait_for(future, TIMEOUT)
        if "error" in message:
            raise RpcError(f"{method}: {message['error']}")
        return message.get("result"), end - start

    async def notify(self, method: str, params: Any) -> None:
        message: Json = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        assert self.process.stdin is not None
        await self.process.stdin.drain()

    def expect(self, predicate: Callable[[Notice], bool]) -> asyncio.Future[Notice]:
        """A future for the next notification matching `predicate` (register before causing it)."""
        future: asyncio.Future[Notice] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return future

    # -- receiving -------------------------------------------------------------------------

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                length = -1
                while True:
                    line = await stdout.readline()
                    if not line:
                        raise EOFError("the server closed its stdout")
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if length < 0:
                    raise RpcError("a message without Content-Length")
                message = json.loads(await stdout.readexactly(length))
                self._dispatch(message, time.perf_counter())
        except (EOFError, asyncio.IncompleteReadError, RpcError) as exc:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(RpcError(f"connection lost: {exc}"))
            for _, waiter in self._waiters:
                if not waiter.done():
                    waiter.set_exception(RpcError(f"connection lost: {exc}"))

    def _dispatch(self, message: Json, now: float) -> None:
        method = message.get("method")
        if method is None:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result((now, message))
            return
        params = message.get("params")
        if "id" in message:
            self._answer(message["id"], method, params)
            return
        if method == "window/logMessage":
            self.log_messages.append(params or {})
            return
        notice = Notice(now, method, params)
        self.notices.append(notice)
        if self._waiters:
            remaining = []
            for predicate, waiter in self._waiters:
                if waiter.done():
                    continue
                if predicate(notice):
                    waiter.set_result(notice)
                else:
                    remaining.append((predicate, waiter))
            self._waiters = remaining

    def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        """Answer the server's requests as an editor would."""
        self.server_requests[method] += 1
        result: Any = None
        if method == "client/registerCapability":
            self.registrations.extend(params.get("registrations", []))
        elif method == "workspace/configuration":
            result = [{} for _ in params.get("items", [])]  # no user settings
        elif method == "workspace/workspaceFolders":
            result = [{"uri": self.root_uri, "name": "bench"}]
        elif method == "workspace/applyEdit":
            result = {"applied": False}
        elif method not in (
            "client/unregisterCapability",
            "window/workDoneProgress/create",
            "window/showMessageRequest",
            "window/showDocument",
            "workspace/codeLens/refresh",
            "workspace/diagnostic/refresh",
            "workspace/inlayHint/refresh",
            "workspace/semanticTokens/refresh",
        ):
            error = {"code": -32601, "message": f"not supported by this client: {method}"}
            self._send({"jsonrpc": "2.0", "id": msg_id, "error": error})
            return
        if method == "window/showDocument":
            result = {"success": False}
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def close(self) -> int | None:
        """shutdown, exit, and the exit code (None: it had to be terminated)."""
        with contextlib.suppress(RpcError, TimeoutError):
            await asyncio.wait_for(self.request("shutdown", None), 30)
            await self.notify("exit", None)
        try:
            code = await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.terminate()
            await self.process.wait()
            code = None
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        return code


# -- LSP glob patterns (the watcher a client registers decides what it reports) -----------------


def glob_regex(pattern: str) -> re.Pattern[str]:
    """An LSP glob pattern (`*`, `?`, `**`, `{a,b}`, `[...]`) as a regex over `/` paths."""
    out: list[str] = []
    index = 0
    depth = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            out.append("(?:")
            depth += 1
        elif char == "}" and depth:
            out.append(")")
            depth -= 1
        elif char == "," and depth:
            out.append("|")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out))


def watched(registrations: Sequence[Json], root: Path, path: Path) -> list[str]:
    """The registered watcher globs that report a change of `path` (empty: none would)."""
    matches = []
    for registration in registrations:
        if registration.get("method") != WATCHED:
            continue
        options = registration.get("registerOptions") or {}
        for watcher in options.get("watchers", []):
            glob = watcher.get("globPattern")
            kind = watcher.get("kind", 7)
            if not kind & FILE_CHANGED:
                continue
            if isinstance(glob, dict):  # RelativePattern; baseUri: a URI or a WorkspaceFolder
                base_uri = glob.get("baseUri", "")
                if isinstance(base_uri, dict):
                    base_uri = base_uri.get("uri", "")
                base = Path(unquote(urlparse(str(base_uri)).path))
                text = str(glob.get("pattern", ""))
                if not path.is_relative_to(base):
                    continue
                candidates = [path.relative_to(base).as_posix()]
            else:
                text = str(glob)
                candidates = [path.relative_to(root).as_posix(), path.as_posix()]
            regex = glob_regex(text)
            if any(regex.fullmatch(candidate) for candidate in candidates):
                matches.append(text)
    return matches


# -- statistics ----------------------------------------------------------------------------------


def pct(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) with linear interpolation; NaN when there are no samples."""
    ordered = sorted(samples)
    if not ordered:
        return math.nan
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


@dataclass
class Series:
    label: str
    samples: list[float] = field(default_factory=list)

    def row(self) -> str:
        s = self.samples
        return (
            f"  {self.label:<52} {len(s):>5} {ms(pct(s, 0.5)):>8} {ms(pct(s, 0.95)):>8} "
            f"{ms(max(s) if s else math.nan):>8}"
        )


LATENCY_HEADER: Final = f"  {'request':<52} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Workload:
    root: Path
    targets: list[Path]
    """Depth-12 source files (created, so opened documents match the disk)."""
    trivial: Path
    """A plain .go file the trivial request is about (nothing to say there)."""
    open_docs: list[Path]


def language_of(path: Path) -> str:
    if path.suffix == ".go":
        return "go"
    if path.suffix == ".md":
        return "markdown"
    return "plaintext"


def prepare(root: Path, *, dirs: int, files: int, open_count: int) -> Workload:
    started = time.perf_counter()
    targets = [root / target for target in build_repo(root, directories=dirs, files=files)]
    for target in targets:  # build_repo names the targets; make them real files to open
        target.write_text("package x\n")
    sources: list[Path] = []
    instructions: list[Path] = []
    for directory, subdirs, names in os.walk(root):
        subdirs.sort()
        for name in sorted(names):
            path = Path(directory, name)
            if name.endswith(".go") and name != "main.go":
                sources.append(path)
    first_chain = targets[0].parents[len(targets[0].relative_to(root).parts) - 2]
    for path in sorted(root.glob(".prayu/**/*")) + sorted(first_chain.rglob("*")):
        if path.is_file() and (path.name in INSTRUCTION_NAMES or ".prayu" in path.parts):
            instructions.append(path)
    instructions = [root / "AGENTS.md", root / "CLAUDE.md", *instructions]
    # Keep the root files, the ignore file, a few rules and the chain's files.
    rules = [path for path in instructions if "rules" in path.parts]
    instructions = [path for path in instructions if "rules" not in path.parts] + rules[:3]
    rng = random.Random(11)
    wanted = max(0, open_count - len(instructions) - len(targets))
    chosen = rng.sample(sources, min(wanted, len(sources)))
    open_docs = instructions + targets + chosen
    print(
        f"built {dirs} dirs, {files} files, {len(targets)} depth-12 targets in "
        f"{time.perf_counter() - started:.1f}s; {len(open_docs)} documents to open "
        f"({len(instructions)} instruction files)"
    )
    return Workload(root, targets, targets[0], open_docs)


def initialize_params(root_uri: str) -> Json:
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "rutter-lsp-latency", "version": "1"},
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": "bench"}],
        "initializationOptions": {},
        "trace": "off",
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": True, "showMessage": {}},
            "workspace": {
                "applyEdit": False,
                "workspaceFolders": True,
                "configuration": True,
                "didChangeConfiguration": {"dynamicRegistration": True},
                "didChangeWatchedFiles": {
                    "dynamicRegistration": True,
                    "relativePatternSupport": True,
                },
                "executeCommand": {"dynamicRegistration": False},
                "codeLens": {"refreshSupport": True},
            },
            "textDocument": {
                "synchronization": {"dynamicRegistration": False, "didSave": True},
                "hover": {"dynamicRegistration": False, "contentFormat": ["markdown"]},
                "codeLens": {"dynamicRegistration": False},
                "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
            },
        },
    }


def doc_id(path: Path) -> Json:
    return {"textDocument": {"uri": path.as_uri()}}


async def interleaved(
    client: Client, targets: Sequence[Path], trivial: Path, rounds: int
) -> tuple[Series, Series]:
    """Warm effectiveInstructions and the trivial request, alternating which goes first."""
    effective, baseline = Series(f"{EFFECTIVE} warm"), Series(f"{TRIVIAL} on a .go file")
    for round_ in range(rounds):
        for index, target in enumerate(targets):
            pair = [
                (EFFECTIVE, doc_id(target), effective),
                (TRIVIAL, doc_id(trivial), baseline),
            ]
            if (round_ + index) % 2:
                pair.reverse()
            for method, params, series in pair:
                _, seconds = await client.request(method, params)
                series.samples.append(seconds)
    return effective, baseline


async def probe(
    client: Client, stop: asyncio.Event, method: str, params: Sequence[Json], series: Series
) -> None:
    index = 0
    while not stop.is_set():
        _, seconds = await client.request(method, params[index % len(params)])
        series.samples.append(seconds)
        index += 1
        await asyncio.sleep(PROBE_INTERVAL)


async def quiet(client: Client, since: float, methods: frozenset[str]) -> None:
    """Until no notification in `methods` has arrived for QUIET_SECONDS."""
    while True:
        last = max(
            (n.at for n in client.notices if n.at >= since and n.method in methods), default=since
        )
        wait = last + QUIET_SECONDS - time.perf_counter()
        if wait <= 0:
            return
        await asyncio.sleep(wait)


@dataclass
class ChangeRound:
    to_changed: float
    to_last_publish: float
    publishes: int
    paths: list[str]
    trivial: Series
    effective: Series


async def change_round(
    client: Client, work: Workload, round_: int, watchers: list[str], *, settled: bool
) -> ChangeRound:
    """One rewrite of the root AGENTS.md. `settled=False`: the notification goes right after
    the write, as editors send it, so the round includes the reader's settle wait (a file
    stamped less than `SETTLED_MS` ago is read again once it is that old). `settled=True`: it
    goes once the file's stamp is that old, so the round is propagation proper."""
    agents = work.root / "AGENTS.md"
    text = agents.read_text().rstrip("\n") + f"\n- Change {round_}: keep the build green.\n"
    agents.write_text(text)
    if settled:
        st = agents.stat()
        stamped = max(st.st_mtime_ns, st.st_ctime_ns)
        wait_ns = stamped + SETTLE_NS + CLOCK_TICK_NS - time.time_ns()
        if wait_ns > 0:
            await asyncio.sleep(wait_ns / 1e9)
    arrived = client.expect(lambda n: n.method == CHANGED)
    start = time.perf_counter()
    if watchers:  # a client reports only what a registered watcher covers
        await client.notify(WATCHED, {"changes": [{"uri": agents.as_uri(), "type": FILE_CHANGED}]})
    stop = asyncio.Event()
    trivial, effective = (
        Series(f"{TRIVIAL} during the change"),
        Series(f"{EFFECTIVE} during the change"),
    )
    probers = [
        asyncio.create_task(probe(client, stop, TRIVIAL, [doc_id(work.trivial)], trivial)),
        asyncio.create_task(
            probe(client, stop, EFFECTIVE, [doc_id(t) for t in work.targets], effective)
        ),
    ]
    try:
        notice = await asyncio.wait_for(arrived, TIMEOUT)
        await quiet(client, start, frozenset({PUBLISH, CHANGED}))
    finally:
        stop.set()
        await asyncio.gather(*probers)
    publishes = [n.at for n in client.notices if n.at >= start and n.method == PUBLISH]
    last = max(publishes, default=math.nan)
    paths = list(notice.params.get("paths", []))
    return ChangeRound(notice.at - start, last - start, len(publishes), paths, trivial, effective)


def syscall_floor(work: Workload) -> tuple[Callable[[], None], int, int]:
    """The disk work a change of the root AGENTS.md cannot avoid, with none of discovery's
    checks: an lstat of every directory on the way to an open document (each once: has it
    changed?) and one read of each instruction file they hold (the root's rules folder
    included)."""
    root = work.root
    directories: set[Path] = set()
    for doc in work.open_docs:
        current = doc.parent
        while current != root and root in current.parents:
            directories.add(current)
            current = current.parent
    directories.add(root)
    ordered = sorted(str(path) for path in directories)
    sources = sorted(
        str(path)
        for directory in directories
        for path in [*directory.glob("*.md"), *directory.glob(".claude/*.md")]
        if path.name in INSTRUCTION_NAMES
    ) + sorted(str(path) for path in (root / ".prayu").rglob("*") if path.is_file())

    def run() -> None:
        for directory in ordered:
            os.lstat(directory)
        for path in sources:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.read(fd, 1 << 20)
            finally:
                os.close(fd)

    return run, len(ordered), len(sources)


def create_runs(home: Path, work: Workload, count: int) -> None:
    """`count` active runs on the targets, in the store the server will open (the folder
    "bench" is registered first, so the server reuses the registration). Every change of the
    root AGENTS.md then makes all of them stale: the server re-inspects each one and puts a
    drift diagnostic per run on the open root AGENTS.md."""
    from rutter_core.discovery.fsread import FileReader
    from rutter_core.runs.service import create_run
    from rutter_core.store import open_store
    from rutter_core.workspaces.service import register_workspace

    reader = FileReader()
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(
            store,
            "bench",
            work.root,
            cwd=work.root,
            machine=machine_id(machine_sources(os.environ)),
        )
        for index in range(count):
            target = work.targets[index % len(work.targets)]
            create_run(
                store,
                workspace_id="bench",
                goal=f"benchmark run {index}",
                reader=reader,
                actor="cli",
                target=str(target.relative_to(work.root)),
            )
    print(f"created {count} active runs on the targets")


def load_average() -> str:
    """The machine's load, printed with the figures: other work on the cores inflates them."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def server_command(profile: str | None) -> list[str]:
    if profile is None:
        return [sys.executable, "-m", "rutter_lsp.server"]
    return [sys.executable, str(HERE / "lsp_profiled_server.py"), profile]


async def run(args: argparse.Namespace, scratch: Path) -> None:
    root = scratch / "repo"
    root.mkdir()
    print(f"load average (1/5/15 min): {load_average()} on {os.cpu_count()} cores")
    work = prepare(root, dirs=args.dirs, files=args.files, open_count=args.open)
    root_uri = root.as_uri()
    # Files younger than the racy window are (correctly) never cached; let them age.
    await asyncio.sleep(DEFAULT_RACY_WINDOW_NS / 1e9 + 0.2)

    env = {key: value for key, value in os.environ.items() if key != "RUTTER_DATABASE_URL"}
    env["RUTTER_HOME"] = str(scratch / "home")
    if args.runs:
        create_runs(scratch / "home", work, args.runs)
    stderr_path = scratch / "server.stderr"
    with stderr_path.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *server_command(args.profile),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            limit=1 << 20,
        )
    client = Client(process, root_uri)
    client.start()
    try:
        await measure(client, work, args)
    finally:
        code = await client.close()
        print(f"\nshutdown/exit: server exit code {code}")
        errors = [m for m in client.log_messages if m.get("type", 4) <= 2]
        if errors:
            print(f"server warnings/errors ({len(errors)}), first: {errors[0].get('message')}")
        tail = stderr_path.read_text(errors="replace").strip().splitlines()[-5:]
        if code != 0 and tail:
            print("server stderr (tail):\n  " + "\n  ".join(tail))
    if args.profile:
        print_profile(args.profile)


async def measure(client: Client, work: Workload, args: argparse.Namespace) -> None:
    root = work.root
    started = time.perf_counter()
    result, _ = await client.request("initialize", initialize_params(client.root_uri))
    await client.notify("initialized", {})
    # The server is ready once it answers a request that waits for `initialized` to finish.
    _, first = await client.request(EFFECTIVE, doc_id(root / "go.mod"))
    ready = time.perf_counter() - started
    watchers = watched(client.registrations, root, root / "AGENTS.md")
    globs = [
        watcher.get("globPattern")
        for registration in client.registrations
        if registration.get("method") == WATCHED
        for watcher in (registration.get("registerOptions") or {}).get("watchers", [])
    ]
    encoding = result["capabilities"].get("positionEncoding", "utf-16")
    print(
        f"server: {encoding}, initialize→ready {ready:.2f}s, first request {ms(first)} ms; "
        f"{len(globs)} watcher globs registered; a change of the root AGENTS.md is reported "
        f"via {watchers or 'none (no change will be sent)'}"
    )

    # 1. Latency: cold (first request per target), then warm, interleaved with the trivial one.
    for _ in range(20):
        await client.request(TRIVIAL, doc_id(work.trivial))
    cold = Series(f"{EFFECTIVE} cold (first per target)")
    sources: set[int] = set()
    sizes: list[int] = []
    for target in work.targets:
        answer, seconds = await client.request(EFFECTIVE, doc_id(target))
        if "error" in answer:
            raise RpcError(f"{target}: {answer['error']}")
        sources.add(len(answer.get("sources", [])))
        sizes.append(len(json.dumps(answer)))
        cold.samples.append(seconds)
    effective, baseline = await interleaved(client, work.targets, work.trivial, args.rounds)

    # 2. Open the documents; wait for the index (a code lens waits for the refresh to finish).
    barrier = doc_id(root / "AGENTS.md")
    started = time.perf_counter()
    for path in work.open_docs:
        await client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": path.as_uri(),
                    "languageId": language_of(path),
                    "version": 1,
                    "text": path.read_text(),
                }
            },
        )
    lens, _ = await client.request("textDocument/codeLens", barrier)
    opened = time.perf_counter() - started
    await quiet(client, started, frozenset({PUBLISH}))
    effective_open, baseline_open = await interleaved(
        client, work.targets, work.trivial, max(1, args.rounds // 4)
    )
    effective_open.label = f"{EFFECTIVE} warm"
    baseline_open.label = f"{TRIVIAL} on a .go file"

    at_once: list[ChangeRound] = []
    rounds: list[ChangeRound] = []
    floor_run, floor_dirs, floor_files = syscall_floor(work)
    floors: list[float] = []
    for round_ in range(args.changes):
        for settled, kept in ((False, at_once), (True, rounds)):
            await asyncio.sleep(DEFAULT_RACY_WINDOW_NS / 1e9 + 0.2)  # from a cached state
            number = 2 * round_ + int(settled)
            kept.append(await change_round(client, work, number, watchers, settled=settled))
            for _ in range(3):  # the same machine, moments after the round
                began = time.perf_counter()
                floor_run()
                floors.append(time.perf_counter() - began)

    # -- report ----------------------------------------------------------------------------
    print(
        f"\n1. latency, {len(work.targets)} depth-12 targets (stacks of "
        f"{'/'.join(map(str, sorted(sources)))} sources, answers of "
        f"{statistics.median(sizes) / 1024:.0f} KiB), {args.rounds} warm rounds, not open"
    )
    print(LATENCY_HEADER)
    for series in (baseline, effective, cold):
        print(series.row())
    warm50 = pct(effective.samples, 0.5) / pct(baseline.samples, 0.5)
    warm95 = pct(effective.samples, 0.95) / pct(baseline.samples, 0.95)
    cold50 = pct(cold.samples, 0.5) / pct(baseline.samples, 0.5)
    print(
        f"  warm/trivial: p50 {warm50:.2f}x  p95 {warm95:.2f}x   cold/trivial p50 {cold50:.2f}x"
        "   (target: warm <= 3x)"
    )

    lens_title = lens[0]["command"]["title"] if lens else "no lens"
    print(
        f"\n2. {len(work.open_docs)} documents open: didOpen burst → index ready "
        f"{opened * 1e3:.0f} ms (root AGENTS.md lens: {lens_title!r})"
    )
    print(LATENCY_HEADER)
    for series in (baseline_open, effective_open):
        print(series.row())
    print(
        f"  warm/trivial: p50 "
        f"{pct(effective_open.samples, 0.5) / pct(baseline_open.samples, 0.5):.2f}x"
    )

    print(
        f"\n3. change propagation: root AGENTS.md rewritten, {WATCHED} sent, "
        f"{len(work.open_docs)} open ({len(rounds)} rounds of each variant)\n"
        f"  (a) notification right after the write, as editors send it: includes the settle "
        f"wait (a file stamped less than {SETTLED_MS} ms ago is read again once it is that old)"
        f"\n  (b) notification once the file is settled (stamp at least {SETTLED_MS} ms old): "
        "propagation proper; the goal applies to (b)"
    )
    header = (
        f"  {'round':>8} {'→instructionsChanged ms':>24} {'→last publish ms':>17} "
        f"{'publishes':>9} {'trivial p95/max ms':>19} {'effective p95/max ms':>21}"
    )

    def row(label: str, cells: Sequence[list[float]], publishes: float) -> str:
        to_changed, to_publish, t95, tmax, e95, emax = (
            ms(statistics.median(cell)) if cell else "nan" for cell in cells
        )
        return (
            f"  {label:>8} {to_changed:>24} {to_publish:>17} {publishes:>9g} "
            f"{t95 + '/' + tmax:>19} {e95 + '/' + emax:>21}"
        )

    def cells(changes: Sequence[ChangeRound]) -> list[list[float]]:
        return [
            [c.to_changed for c in changes],
            [c.to_last_publish for c in changes],
            [pct(c.trivial.samples, 0.95) for c in changes],
            [max(c.trivial.samples, default=math.nan) for c in changes],
            [pct(c.effective.samples, 0.95) for c in changes],
            [max(c.effective.samples, default=math.nan) for c in changes],
        ]

    print(header)
    for variant, changes in (("a", at_once), ("b", rounds)):
        for number, change in enumerate(changes, start=1):
            print(row(f"{variant}{number}", cells([change]), change.publishes))
        if changes:
            median_publishes = statistics.median(c.publishes for c in changes)
            print(row(f"{variant} median", cells(changes), median_publishes))
    everything = at_once + rounds
    samples = [len(c.trivial.samples) for c in everything]
    print(
        f"  probes: one {TRIVIAL} and one {EFFECTIVE} in flight at a time, "
        f"{PROBE_INTERVAL * 1e3:.0f} ms apart; {min(samples, default=0)} to "
        f"{max(samples, default=0)} trivial samples per round"
    )
    if rounds:
        floor = statistics.median(floors)
        last = statistics.median(c.to_last_publish for c in rounds)
        last_at_once = statistics.median(c.to_last_publish for c in at_once)
        met = last <= 3 * floor and last < 0.1
        print(
            f"  syscall floor of the affected paths (lstat of the {floor_dirs} directories on "
            f"the way, one read of each of the {floor_files} instruction files), median: "
            f"{ms(floor)} ms\n"
            f"  (b) change → last publish: {ms(last)} ms = {last / floor:.2f}x the floor"
            f"   (goal: <= 3x and < 100 ms: {'met' if met else 'not met'})\n"
            f"  (a) change → last publish: {ms(last_at_once)} ms = "
            f"{last_at_once / floor:.2f}x the floor (settle wait included)"
        )
    reported = sorted({path for change in everything for path in change.paths})
    print(f"  load average after the rounds (1/5/15 min): {load_average()}")
    reported = sorted({path for change in rounds for path in change.paths})
    print(f"  {CHANGED} paths: {reported}")
    print(f"  server requests answered: {dict(sorted(client.server_requests.items()))}")


def print_profile(path: str) -> None:
    import pstats

    if not Path(path).exists():
        print(f"no profile written to {path}")
        return
    print(f"\nprofile (all server threads): {path}; top functions by own time")
    pstats.Stats(path).sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dirs", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20, help="warm latency rounds")
    parser.add_argument("--open", type=int, default=1_000, help="documents open for the change")
    parser.add_argument("--changes", type=int, default=5, help="change propagation rounds")
    parser.add_argument(
        "--runs", type=int, default=0, help="active runs whose drift each change updates"
    )
    parser.add_argument(
        "--profile", metavar="PATH", help="run the server under cProfile (all threads), to PATH"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rutter-lsp-bench-") as scratch:
        asyncio.run(run(args, Path(scratch).resolve()))


if __name__ == "__main__":
    main()
