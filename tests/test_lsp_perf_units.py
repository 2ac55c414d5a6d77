"""The language server's fast paths give the same answers as the plain ones.

Discovery's stack (`discover_stack`, with and without levels shared across a batch) against
`discover`; the encoded snapshot cache against the snapshot; the protocol's direct encoding
of plain results against what a client must receive; the disk worker's lanes; the workspace
registration cache. No timing is asserted anywhere.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from rutter_core.app.facade import Rutter
from rutter_core.discovery import fsread
from rutter_core.discovery.assemble import snapshot_of
from rutter_core.discovery.chain import walk_chain
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.layout import classify
from rutter_core.discovery.snapshot import Limits
from rutter_core.discovery.stack import Stack
from rutter_core.discovery.walk import SharedLevels, discover, discover_stack
from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store
from rutter_core.workspaces.service import Workspace
from rutter_lsp.dispatch import decode
from rutter_lsp.features.instructions import instructions
from rutter_lsp.features.instructions.instructions import (
    EFFECTIVE_INSTRUCTIONS,
    DocumentParams,
    EncodedSnapshots,
)
from rutter_lsp.index.paths import Folder
from rutter_lsp.index.refresh import (
    CHANGE_DEBOUNCE_SECONDS,
    DEBOUNCE_SECONDS,
    _collections_paused,
    _Pending,
    level_of,
    reach,
)
from rutter_lsp.protocol import EncodedResult
from rutter_lsp.registrations import WorkspaceCache
from rutter_lsp.setup import create_server
from rutter_lsp.worker import SETTLE_ROUNDS, DiskWorker
from tests.conftest import write_tree

TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root\n",
    "CLAUDE.md": "claude root\n",
    ".prayu/instructions.md": "prayu\n",
    ".prayu/instructions.ignore": "drafts/\n",
    ".prayu/rules/go/style.md": "go style\n",
    ".prayu/rules/drafts/wip.md": "wip\n",
    "svc/AGENTS.override.md": "override\n",
    "svc/AGENTS.md": "superseded\n",
    "svc/.prayu/rules/go/style.md": "svc go style\n",
    "svc/api/.claude/CLAUDE.md": "api claude\n",
    "svc/api/internal/AGENTS.md": "internal\n",
    "svc/api/internal/x.go": "package x\n",
    "svc/web/CLAUDE.md": "",  # fails closed (empty_source) for svc/web and below
    "svc/web/ui/y.ts": "y\n",
    "lib/deep/er/z.go": "z\n",
    "lib/blank/AGENTS.override.md": "  \n",
    "lib/blank/AGENTS.md": "blank fallback\n",
}
TARGETS = [
    ".",
    "svc",
    "svc/api",
    "svc/api/internal",
    "svc/api/internal/x.go",
    "svc/api/internal/new-file.go",
    "svc/web",
    "svc/web/ui",
    "svc/web/ui/y.ts",
    "lib/deep/er",
    "lib/deep/er/z.go",
    "lib/blank",
    "lib/blank/b.go",
    "missing/dir/file.go",
]


def outcome(root: Path, target: str, reader: FileReader, **kwargs: Any) -> Stack | tuple[Any, ...]:
    try:
        return discover_stack("demo", str(root), target, reader=reader, **kwargs)
    except RutterError as error:
        return (error.code, error.message, error.path, error.details)


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_shared_levels_give_the_stacks_of_separate_walks(workspace_root: Path, order: str) -> None:
    write_tree(workspace_root, TREE)
    targets = TARGETS if order == "forward" else TARGETS[::-1]
    shared = SharedLevels()
    for target in targets:
        alone = outcome(workspace_root, target, FileReader())
        assert outcome(workspace_root, target, FileReader(), shared=shared) == alone, target
    failed = outcome(workspace_root, "svc/web/ui", FileReader(), shared=shared)
    assert isinstance(failed, tuple)
    assert failed[0] == "empty_source"


def test_errors_of_shared_levels_name_each_target(workspace_root: Path) -> None:
    files: dict[str, str | bytes] = {
        "AGENTS.md": "r\n", "a/AGENTS.md": "a\n", "a/b/AGENTS.md": "b\n", "a/b/c/two.go": "",
    }  # fmt: skip
    write_tree(workspace_root, files)
    limits = Limits(max_files=2)
    shared = SharedLevels()
    messages = []
    for target in ("a/b/one.go", "a/b/c/two.go", "a/x.go"):
        alone = outcome(workspace_root, target, FileReader(), limits=limits)
        found = outcome(workspace_root, target, FileReader(), limits=limits, shared=shared)
        assert found == alone
        if isinstance(found, tuple):
            messages.append(found[1])
    assert len(messages) == 2
    assert "a/b/one.go" in messages[0]
    assert "a/b/c/two.go" in messages[1]


def test_discover_is_the_snapshot_of_the_stack(workspace_root: Path) -> None:
    write_tree(workspace_root, TREE)
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    for target in ("svc/api/internal/x.go", "lib/blank/b.go", "."):
        reader = FileReader()
        stack = discover_stack("demo", str(workspace_root), target, reader=reader)
        built = snapshot_of(stack, reader=FileReader(), now=lambda: moment)
        assert built == discover(
            "demo", str(workspace_root), target, reader=reader, now=lambda: moment
        )
        assert [source.path for source in built.sources] == [s.path for s in stack.sources]
        assert built.conflicts == list(stack.conflicts)
        assert built.ignored == list(stack.ignored)


def test_encoded_snapshots_are_the_snapshot_with_a_fresh_loaded_at(workspace_root: Path) -> None:
    write_tree(workspace_root, TREE)
    reader = FileReader()
    cache = EncodedSnapshots()
    target = "svc/api/internal/x.go"

    def answer() -> dict[str, Any]:
        stack = discover_stack("demo", str(workspace_root), target, reader=reader)
        result: dict[str, Any] = json.loads(
            cache.encode(stack, lambda stack: snapshot_of(stack, reader=reader))
        )
        return result

    first = answer()
    expected = discover("demo", str(workspace_root), target, reader=reader).to_json()
    assert {**first, "loaded_at": None} == {**expected, "loaded_at": None}
    assert first["sources"] == expected["sources"]
    again = answer()  # from the cache: equal except for when it was checked
    datetime.strptime(again["loaded_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert {**again, "loaded_at": None} == {**first, "loaded_at": None}

    (workspace_root / "svc/api/internal/AGENTS.md").write_text("internal, edited\n")
    changed = answer()
    contents = [source["content"] for source in changed["sources"]]
    assert "internal, edited\n" in contents
    assert changed["fingerprint"] != first["fingerprint"]
    assert changed == {
        **discover("demo", str(workspace_root), target, reader=reader).to_json(),
        "loaded_at": changed["loaded_at"],
    }


def test_effective_instructions_worker_job_raises_typed_errors(
    store: Store, workspace_root: Path
) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "a/CLAUDE.md": "", "b/c.go": ""})
    workspace = Workspace(
        workspace_id="demo",
        root=str(workspace_root),
        created_at="2026-01-01T00:00:00Z",
        project_id="local:demo",
        project_source="local",
    )
    rutter, cache = Rutter(store, FileReader()), EncodedSnapshots()
    good = instructions._encoded(rutter, cache, workspace, "b/c.go")
    assert [s["path"] for s in json.loads(good)["sources"]] == ["AGENTS.md"]
    with pytest.raises(RutterError) as raised:
        instructions._encoded(rutter, cache, workspace, "a/c.go")
    assert raised.value.code == "empty_source"
    assert raised.value.path == "a/CLAUDE.md"


class _Writer:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


def _messages(data: bytes) -> list[dict[str, Any]]:
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n"))
        length = int(headers[b"Content-Length"])
        found.append(json.loads(rest[:length]))
        data = rest[length:]
    return found


def _answering(result: Any) -> Any:
    def handler(params: Any) -> Any:
        return result

    return handler


def test_protocol_sends_plain_and_encoded_results_as_json_rpc_responses() -> None:
    server = create_server()
    protocol = server.protocol
    writer = _Writer()
    protocol.set_writer(writer)
    plain = {"workspace_id": "demo", "content": "naïve — ✓\n", "n": [1, None, True]}
    encoded = json.dumps({"encoded": "é"}, ensure_ascii=False)  # the frame counts bytes
    answers: dict[str, Any] = {
        "test/plain": plain,
        "test/encoded": EncodedResult(encoded),
        # Not plain JSON: pygls' converter encodes what is inside the dict.
        "test/attrs": {"at": types.Position(line=1, character=2), "kind": types.MessageType.Info},
        "test/none": None,
    }
    for method, result in answers.items():
        server.feature(method)(_answering(result))
    for number, method in enumerate(answers):
        request = {"jsonrpc": "2.0", "id": f"req-{number}", "method": method, "params": {}}
        protocol.handle_message(
            json.loads(json.dumps(request), object_hook=protocol.structure_message)
        )
    messages = _messages(writer.data)
    assert messages == [
        {"id": "req-0", "jsonrpc": "2.0", "result": plain},
        {"id": "req-1", "jsonrpc": "2.0", "result": {"encoded": "é"}},
        {"id": "req-2", "jsonrpc": "2.0", "result": {"at": {"line": 1, "character": 2}, "kind": 3}},
        {"id": "req-3", "jsonrpc": "2.0", "result": None},
    ]


def test_custom_request_params_stay_plain_json() -> None:
    protocol = create_server().protocol
    params = {"textDocument": {"uri": "file:///w/a.go"}}
    message = json.loads(
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": EFFECTIVE_INSTRUCTIONS, "params": params}),
        object_hook=protocol.structure_message,
    )
    assert (message.id, message.method, message.params) == (3, EFFECTIVE_INSTRUCTIONS, params)
    assert decode(DocumentParams, message.params).text_document.uri == "file:///w/a.go"
    other = json.loads(
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "x/y", "params": params}),
        object_hook=protocol.structure_message,
    )
    assert other.params == params  # any request lsprotocol has no type for


def blocking(started: threading.Event, gate: threading.Event) -> bool:
    """A job that says it runs, then holds the worker until `gate` is set."""
    started.set()
    return gate.wait(30)


@pytest.mark.asyncio
async def test_worker_runs_requests_before_queued_background_jobs() -> None:
    worker = DiskWorker()
    order: list[str] = []
    started, gate = threading.Event(), threading.Event()
    try:
        blocker = asyncio.ensure_future(worker.run_background(blocking, started, gate))
        # The blocker is running (however long a busy machine took to start it): what
        # follows is queued behind it.
        assert await asyncio.to_thread(started.wait, 30)
        background = asyncio.ensure_future(worker.run_background(order.append, "background"))
        urgent = asyncio.ensure_future(worker.run(order.append, "urgent"))
        await asyncio.sleep(0)  # both tasks run up to their wait: both jobs are queued
        gate.set()
        await asyncio.gather(blocker, background, urgent)
        assert order == ["urgent", "background"]

        freed_on: list[str] = []

        class Big:
            def __del__(self) -> None:
                freed_on.append(threading.current_thread().name)

        box: list[Any] = [Big()]
        worker.discard(box)
        del box
        await worker.run(lambda: None)  # after the discard's lane has drained
        await worker.run_background(lambda: None)
        assert freed_on == ["rutter-disk"]
    finally:
        worker.shutdown()
    with pytest.raises(RuntimeError):
        await worker.run(lambda: None)


@pytest.mark.asyncio
async def test_worker_shutdown_cancels_queued_jobs() -> None:
    worker = DiskWorker()
    started, gate = threading.Event(), threading.Event()
    running = asyncio.ensure_future(worker.run(blocking, started, gate))
    # Shut down only once the job runs: a fixed pause was too short on a busy machine, and a
    # job still queued is cancelled.
    assert await asyncio.to_thread(started.wait, 30)
    queued = asyncio.ensure_future(worker.run_background(lambda: "never"))
    await asyncio.sleep(0)
    worker.shutdown()
    gate.set()
    assert await running is True
    with pytest.raises(asyncio.CancelledError):
        await queued


def test_workspace_cache_follows_the_store_and_expires(store: Store, tmp_path: Path) -> None:
    now = [100.0]
    cache = WorkspaceCache(clock=lambda: now[0])
    workspace = Workspace(
        workspace_id="demo",
        root=str(tmp_path),
        created_at="2026-01-01T00:00:00Z",
        project_id="local:demo",
        project_source="local",
    )
    assert cache.get(store, "demo") is None
    cache.put(store, workspace, now[0])
    assert cache.get(store, "demo") == workspace
    assert cache.get(object(), "demo") is None  # type: ignore[arg-type]  # another store
    now[0] += instructions.REVALIDATE_SECONDS + 0.1
    assert cache.get(store, "demo") is None  # re-read from the store now and then
    cache.put(store, workspace, now[0])
    cache.clear()
    assert cache.get(store, "demo") is None


def chain_outcome(
    root: Path, target: str, limits: Limits, shared: SharedLevels | None
) -> list[tuple[str, str, int]] | tuple[Any, ...]:
    try:
        if shared is None:
            levels = walk_chain(str(root), target, limits)
        else:
            levels = shared.chain(str(root), target, limits)
    except RutterError as error:
        return (error.code, error.message, error.path, error.details)
    return [(level.scope, level.path, level.depth) for level in levels]


class CountingLevels(SharedLevels):
    """Shared levels that record every lookup the chain walks ask of them."""

    def __init__(self) -> None:
        super().__init__()
        self.looked_up: list[str] = []

    def lstat(self, path: str) -> Any:
        self.looked_up.append(path)
        return super().lstat(path)


CHAIN_TARGETS = [
    "a/b/c/d/x.go",
    "a/b/c/y.go",
    "a/b/c/d",
    "a/b/c/d/e/f/too-deep.go",  # over max_depth below directories the pass has checked
    "a/b/linked/z.go",  # through a linked directory below a checked one
    "a/b/linked",
    "a/b/file.txt/w.go",  # through a file
    "a/b/missing/v.go",
    "a/b/new.go",
    "a/other/u.go",
    ".",
]


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_shared_chains_are_the_chains_of_separate_walks(workspace_root: Path, order: str) -> None:
    """A directory checked on the way to one target of a pass is not checked again on the way
    to another, and every target still gets the levels (or the error naming it) that its own
    walk gives."""
    write_tree(
        workspace_root,
        {"a/b/c/d/e/f/g.go": "", "a/b/file.txt": "", "a/other/u.go": "", "elsewhere/k.go": ""},
    )
    (workspace_root / "a/b/linked").symlink_to(
        workspace_root / "elsewhere", target_is_directory=True
    )
    limits = Limits(max_depth=6)
    targets = CHAIN_TARGETS if order == "forward" else CHAIN_TARGETS[::-1]
    shared = CountingLevels()
    for target in targets:
        alone = chain_outcome(workspace_root, target, limits, None)
        assert chain_outcome(workspace_root, target, limits, shared) == alone, target
    errors = {
        target: chain_outcome(workspace_root, target, limits, shared)[0]
        for target in CHAIN_TARGETS[3:8]
    }
    assert errors == {
        "a/b/c/d/e/f/too-deep.go": "too_deep",
        "a/b/linked/z.go": "symlink",
        "a/b/linked": "symlink",  # a linked target must end at a file
        "a/b/file.txt/w.go": "not_found",
        "a/b/missing/v.go": "not_found",
    }
    # Each directory of the pass's chains was looked up once (links and files on the way are
    # not directories, so they are looked up again for each target that meets them).
    directories = [
        path for path in shared.looked_up if Path(path).is_dir() and not Path(path).is_symlink()
    ]
    assert len(directories) == len(set(directories))
    assert str(workspace_root / "a/b") in directories


def test_shared_levels_refuse_a_linked_root_for_every_target(tmp_path: Path) -> None:
    """The root is resolved once per pass only once it passed: a root that is a link fails
    each target of the pass, as separate walks do."""
    real = tmp_path / "real"
    write_tree(real, {"AGENTS.md": "r\n", "a/x.go": ""})
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    shared = SharedLevels()
    for target in ("a/x.go", "a/y.go", "."):
        alone = outcome(link, target, FileReader())
        assert isinstance(alone, tuple)
        assert alone[0] == "symlink"
        assert outcome(link, target, FileReader(), shared=shared) == alone
    for target in ("a/x.go", "."):  # the same pass, the real root: answered
        found = outcome(real, target, FileReader(), shared=shared)
        assert isinstance(found, Stack)
        assert [source.path for source in found.sources] == ["AGENTS.md"]


@pytest.mark.parametrize(
    ("rel", "level"),
    [
        ("AGENTS.md", "."),
        (".prayu/instructions.ignore", "."),
        (".prayu/rules/go/style.md", "."),
        ("svc/AGENTS.override.md", "svc"),
        ("svc/.prayu/rules/go", "svc"),
        ("svc/api/.claude/CLAUDE.md", "svc/api"),
        ("svc/api/.claude", "svc/api"),
        ("svc/api/internal/AGENTS.md", "svc/api/internal"),
        ("a/.prayu/rules/b/.claude/CLAUDE.md", "a"),
    ],
)
def test_a_changed_path_belongs_to_its_shallowest_level(rel: str, level: str) -> None:
    assert level_of(rel) == level


def test_a_change_reaches_only_its_level_and_below(workspace_root: Path) -> None:
    """Against discovery itself: after changing any instruction file, every directory the
    change does not reach gets exactly the stack it had; the reached ones are walked again."""
    write_tree(workspace_root, TREE)
    folder = Folder("file:///w", str(workspace_root), "w", "demo", str(workspace_root))
    files = [t for t in TARGETS if t != "."]
    directories = sorted(
        {t.rsplit("/", 1)[0] if "." in t.rsplit("/", 1)[-1] else t for t in files}
        | {".", "svc/api/.claude", "lib"}
    )
    for rel in [path for path in TREE if classify(path) is not None or ".prayu/" in path]:
        before = {d: outcome(workspace_root, d, FileReader()) for d in directories}
        original = (workspace_root / rel).read_bytes()
        (workspace_root / rel).write_bytes(b"changed \xfe\n")  # fails wherever it is read
        try:
            reached = reach({"demo": {rel}}, [folder])
            after = {d: outcome(workspace_root, d, FileReader()) for d in directories}
        finally:
            (workspace_root / rel).write_bytes(original)
        moved = {d for d in directories if after[d] != before[d]}
        # Never read: ignored by the ignore file, or superseded by an override.
        assert moved or rel in (".prayu/rules/drafts/wip.md", "svc/AGENTS.md"), rel
        assert all(reached.reaches(folder, d) for d in moved), (rel, moved)
        if level_of(rel) != ".":  # a change below the root does not reach a sibling tree
            assert not reached.reaches(folder, "lib"), rel


def test_only_changes_on_disk_wait_the_short_debounce() -> None:
    """A batch of changes on disk starts its round after the short debounce; anything that
    comes in bursts (documents opened or closed, folders, settings, the store) after the
    longer one, so the burst is one rebuild."""
    assert _Pending(changes={"demo": {"AGENTS.md"}}, invalidate={"/x"}).debounce() == (
        CHANGE_DEBOUNCE_SECONDS
    )
    assert _Pending(agents=True, diagnostics={"file:///x"}).debounce() == CHANGE_DEBOUNCE_SECONDS
    for burst in ({"docs": True}, {"index": True}, {"all_diagnostics": True}, {"runs": True}):
        pending = _Pending(changes={"demo": {"AGENTS.md"}}, **burst)  # type: ignore[arg-type]
        assert pending.debounce() == DEBOUNCE_SECONDS
    assert CHANGE_DEBOUNCE_SECONDS < DEBOUNCE_SECONDS


def test_a_pass_pauses_garbage_collection_and_always_restores_it() -> None:
    assert gc.isenabled()
    seen: list[bool] = []

    def failing_pass() -> None:
        with _collections_paused():
            seen.append(gc.isenabled())
            raise RuntimeError("a pass that fails")

    with pytest.raises(RuntimeError):
        failing_pass()
    assert seen == [False]
    assert gc.isenabled()
    gc.disable()  # someone else's choice is left alone
    try:
        with _collections_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_reach_compares_whole_path_components(tmp_path: Path) -> None:
    folder = Folder("file:///w", str(tmp_path), "w", "demo", str(tmp_path))
    reached = reach({"demo": {"a/AGENTS.md"}, "other": {"AGENTS.md"}}, [folder])
    assert reached.reaches(folder, "a")
    assert reached.reaches(folder, "a/b/c")
    assert not reached.reaches(folder, "ab")
    assert not reached.reaches(folder, ".")
    assert not reached.reaches(folder, "b")


LANES = ("run", "run_background")
"""The worker's two lanes: requests, and the refresher's slices (both defer settle waits)."""


@pytest.mark.asyncio
@pytest.mark.parametrize("lane", LANES)
async def test_worker_waits_for_a_file_to_settle_off_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lane: str
) -> None:
    """A job whose discovery meets a file stamped moments ago (here: ahead, so it stays
    unsettled) does not sleep on the worker: a job queued after it in its lane is done first,
    and its own answer comes from the next attempt, whose read is the settle check's third."""
    write_tree(tmp_path, {"a/AGENTS.md": "a\n", "b/AGENTS.md": "b\n"})
    ahead = datetime.now(UTC).timestamp() + 3600
    os.utime(tmp_path / "a/AGENTS.md", (ahead, ahead))

    def no_settle(seconds: float) -> None:
        raise AssertionError("the disk worker slept to let a file settle")

    monkeypatch.setattr(fsread, "settle", no_settle)
    reader = FileReader()
    worker = DiskWorker(reader)
    order: list[str] = []

    def stack(rel: str) -> list[str]:
        found = discover("w", str(tmp_path), rel, reader=reader)
        order.append(rel)
        return [source.content for source in found.sources]

    try:
        run = getattr(worker, lane)
        first = asyncio.ensure_future(run(stack, "a/x.go"))
        second = asyncio.ensure_future(run(stack, "b/y.go"))
        answers = await asyncio.wait_for(asyncio.gather(first, second), 30)
        assert list(answers) == [["a\n"], ["b\n"]]
        assert order == ["b/y.go", "a/x.go"]
    finally:
        worker.shutdown()


@pytest.mark.asyncio
@pytest.mark.parametrize("lane", LANES)
async def test_worker_defers_a_settle_wait_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lane: str
) -> None:
    """A job that meets a new unsettled file on every attempt is queued again at most
    `SETTLE_ROUNDS` times; its last attempt waits in place, so it still gets its answer."""
    waits: list[float] = []
    monkeypatch.setattr(fsread, "settle", waits.append)
    reader = FileReader()
    worker = DiskWorker(reader)
    attempts: list[int] = []

    def job() -> str:
        attempts.append(len(attempts))
        directory = f"d{len(attempts)}"
        write_tree(tmp_path, {f"{directory}/AGENTS.md": f"{directory}\n"})
        ahead = datetime.now(UTC).timestamp() + 3600
        os.utime(tmp_path / directory / "AGENTS.md", (ahead, ahead))
        found = discover("w", str(tmp_path), f"{directory}/x.go", reader=reader)
        return found.sources[0].content

    try:
        answer = await asyncio.wait_for(getattr(worker, lane)(job), 30)
    finally:
        worker.shutdown()
    assert len(attempts) == SETTLE_ROUNDS + 1
    assert answer == f"d{SETTLE_ROUNDS + 1}\n"
    assert len(waits) == 1
