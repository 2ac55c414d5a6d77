"""A writer process that pauses mid-write (issue 18, item 3).

A source modified less than `SETTLED_MS` ago is read again once it is that old, and any change
in between is refused (`concurrent_modification`). So a writer whose pause is shorter than the
settle interval is caught; one that pauses longer, with discovery inside the pause after the
interval, is the documented limit (threat model, `settled_ms`).

The writer is a real process writing the file in two halves with a pause between them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rutter_core.discovery import fsread
from rutter_core.discovery.fsread import (
    SETTLE_NS,
    SETTLED_MS,
    FileReader,
    NotSettled,
    SettleLater,
)
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RutterError
from tests.conftest import write_tree

OLD = b"old " * 1000 + b"\n"
NEW = b"new " * 1000 + b"\n"
HALF = len(NEW) // 2
Writer = subprocess.Popen[str]

# Writes the first half of NEW over OLD in place, then pauses: until a line arrives on stdin
# (`step`), or for PAUSE seconds (`timed`, ROUNDS times, alternating OLD and NEW). Reports each
# pause it really made, in nanoseconds.
WRITER = textwrap.dedent(
    """
    import os, sys, time
    path, mode, pause, rounds = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    versions = [b"old " * 1000 + b"\\n", b"new " * 1000 + b"\\n"]
    half = len(versions[1]) // 2
    for index in range(rounds):
        body = versions[(index + 1) % 2]
        fd = os.open(path, os.O_WRONLY)
        os.pwrite(fd, body[:half], 0)
        started = time.monotonic_ns()
        if mode == "step":
            print("half", flush=True)
            sys.stdin.readline()
        else:
            time.sleep(pause)
        paused = time.monotonic_ns() - started
        os.pwrite(fd, body[half:], half)
        os.close(fd)
        print("done", paused, flush=True)
        if mode == "timed":
            time.sleep(pause / 5)
    """
)


@contextmanager
def writer_process(path: Path, mode: str, pause: float, rounds: int) -> Iterator[Writer]:
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), mode, str(pause), str(rounds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()


@pytest.fixture
def agents(workspace_root: Path) -> Path:
    write_tree(workspace_root, {"AGENTS.md": OLD})
    return workspace_root / "AGENTS.md"


def test_the_settle_interval_is_the_documented_figure() -> None:
    documented = (Path(__file__).parent.parent / "docs" / "threat-model.md").read_text()
    assert SETTLED_MS == 100
    assert f"`settled_ms` ({SETTLED_MS} ms)" in documented


def test_writer_resuming_within_the_settle_interval_is_caught(
    workspace_root: Path, agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic: the writer has written half and paused; discovery reads the mixed file
    (twice, identically), then waits to settle; the writer finishes inside that wait."""
    with writer_process(agents, "step", 0, 1) as writer:
        caught = _stepped(workspace_root, writer, monkeypatch)
    assert caught.code == "concurrent_modification"
    assert caught.path == "AGENTS.md"
    found = discover("settle", str(workspace_root), "x.go", reader=FileReader())
    assert found.sources[0].content == NEW.decode()


def _stepped(root: Path, writer: Writer, monkeypatch: pytest.MonkeyPatch) -> RutterError:
    assert writer.stdin is not None
    assert writer.stdout is not None
    assert writer.stdout.readline() == "half\n"
    on_disk = (root / "AGENTS.md").read_bytes()
    assert on_disk == NEW[:HALF] + OLD[HALF:]  # what a reader without the settle would deliver
    waits: list[float] = []

    def writer_resumes(seconds: float) -> None:
        waits.append(seconds)
        assert seconds * 1e9 <= SETTLE_NS
        writer.stdin.write("go\n")  # type: ignore[union-attr]
        writer.stdin.flush()  # type: ignore[union-attr]
        assert writer.stdout.readline().startswith("done")  # type: ignore[union-attr]

    monkeypatch.setattr(fsread, "settle", writer_resumes)
    with pytest.raises(RutterError) as caught:
        discover("settle", str(root), "x.go", reader=FileReader())
    monkeypatch.undo()
    assert writer.wait(timeout=60) == 0
    assert waits, "discovery did not wait to settle: the read path changed, update the test"
    return caught.value


def test_writer_pausing_50_ms_never_delivers_mixed_content(
    workspace_root: Path, agents: Path
) -> None:
    """The attack of issue 18 (50 ms pauses), with real timing: every answer is a whole
    version or a refusal. Mixed content may only come from a pause the machine stretched past
    the settle interval (the documented limit), which is checked from the writer's own log."""
    rounds = 30
    outcomes: Counter[str] = Counter()
    mixed = 0
    with writer_process(agents, "timed", 0.05, rounds) as writer:
        while writer.poll() is None:
            outcome = _outcome(workspace_root)
            mixed += outcome == "mixed"
            outcomes[outcome] += 1
        assert writer.returncode == 0
        assert writer.stdout is not None
        pauses = [int(line.split()[1]) for line in writer.stdout.read().splitlines()]
    assert len(pauses) == rounds
    assert set(outcomes) <= {"whole", "mixed", "concurrent_modification"}, outcomes
    assert mixed == 0 or max(pauses) >= SETTLE_NS, (outcomes, mixed, max(pauses))
    assert agents.stat().st_size == len(NEW)


def _outcome(root: Path) -> str:
    try:
        found = discover("settle", str(root), "x.go", reader=FileReader())
    except RutterError as error:
        return error.code
    content = found.sources[0].content
    return "whole" if content in (OLD.decode(), NEW.decode()) else "mixed"


# The server's reader leaves the settle wait to its caller (`FileReader.settling_later`). A file
# stamped in the future stays unsettled however slow the machine (it waits the full interval).


def _stamped_ahead(path: Path) -> None:
    ahead = time.time() + 3600
    os.utime(path, (ahead, ahead))


def _no_settle_here(seconds: float) -> None:
    raise AssertionError("the settle wait was left to the caller, yet the reader slept")


def test_a_deferred_settle_is_the_callers_and_the_next_attempt_delivers(
    workspace_root: Path, agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stamped_ahead(agents)
    reader, later = FileReader(), SettleLater()
    monkeypatch.setattr(fsread, "settle", _no_settle_here)
    with reader.settling_later(later), pytest.raises(NotSettled) as pending:
        discover("settle", str(workspace_root), "x.go", reader=reader)
    assert pending.value.rel == "AGENTS.md"
    assert 0 < pending.value.wait_s * 1e9 <= SETTLE_NS
    time.sleep(pending.value.wait_s)  # the caller's wait (the server's is on its event loop)
    with reader.settling_later(later):
        found = discover("settle", str(workspace_root), "x.go", reader=reader)
    assert found.sources[0].content == OLD.decode()
    with reader.settling_later(SettleLater()), pytest.raises(NotSettled):  # other work waits
        discover("settle", str(workspace_root), "x.go", reader=reader)


def test_a_writer_resuming_between_the_attempts_is_caught(
    workspace_root: Path, agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails closed: the first attempt read the half-written file (twice, identically) and
    left the wait to the caller; the writer finishes before the next attempt."""
    reader, later = FileReader(), SettleLater()
    monkeypatch.setattr(fsread, "settle", _no_settle_here)
    with writer_process(agents, "step", 0, 1) as writer:
        assert writer.stdin is not None
        assert writer.stdout is not None
        assert writer.stdout.readline() == "half\n"
        _stamped_ahead(agents)  # unsettled, however long the machine took to get here
        with reader.settling_later(later), pytest.raises(NotSettled) as pending:
            discover("settle", str(workspace_root), "x.go", reader=reader)
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert writer.stdout.readline().startswith("done")
        assert writer.wait(timeout=60) == 0
    time.sleep(pending.value.wait_s)
    for attempt in (True, False):  # a later attempt, and the last one (waiting in place)
        later.defer = attempt
        with reader.settling_later(later), pytest.raises(RutterError) as caught:
            discover("settle", str(workspace_root), "x.go", reader=reader)
        assert (caught.value.code, caught.value.path) == ("concurrent_modification", "AGENTS.md")
    monkeypatch.undo()
    found = discover("settle", str(workspace_root), "x.go", reader=FileReader())
    assert found.sources[0].content == NEW.decode()


def test_the_last_attempt_waits_in_place(
    workspace_root: Path, agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stamped_ahead(agents)
    waits: list[float] = []
    monkeypatch.setattr(fsread, "settle", waits.append)
    reader = FileReader()
    with reader.settling_later(SettleLater(defer=False)):
        found = discover("settle", str(workspace_root), "x.go", reader=reader)
    assert found.sources[0].content == OLD.decode()
    assert len(waits) == 1
