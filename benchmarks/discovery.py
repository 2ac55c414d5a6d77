"""Discovery speed against a floor measured in the same run.

Builds synthetic monorepos (depth-12 targets, instruction files at several levels, a root rules
folder of 20 files), then prints per-target medians of:

- floor: a tight loop replaying only the lstat/open/fstat/pread/close system calls that a cold
  discovery of the same target made (recorded by tracing that discovery);
- cold: discovery with a fresh cache (new FileReader) in a warm interpreter;
- warm: discovery with the cache hot and the files unchanged;
- plain floor: the disk work of the answer alone, with none of discovery's checks: an lstat of
  each directory from the root to the target and one open/read/close of each delivered source
  (issue 12's baseline for warm discovery);

and the ratios warm/floor, cold/floor, warm/plain floor, and large/small repository for both.
Goals: warm <= 2x floor, cold <= 4x floor, large/small <= 1.2 (issue 3), warm <= 1.5x plain
floor (issue 12).

Usage: python benchmarks/discovery.py [--dirs 10000] [--small-files 1000] [--large-files 100000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rutter_core.discovery.fsread import DEFAULT_RACY_WINDOW_NS, FileReader
from rutter_core.discovery.walk import discover

DEPTH = 12
RULES = 20
PROSE = (
    "- Run the unit tests before you propose a change; keep the build green.\n"
    "- Prefer small, reviewable commits; reference the issue in the message.\n"
    "- Commit 3f9c2a7b1d4e5f60718293a4b5c6d7e8f9012345 introduced the parser; see "
    "https://example.com/docs/parser?version=2#limits for the design.\n"
)


def _prose(title: str, paragraphs: int) -> str:
    return f"# {title}\n\n" + PROSE * paragraphs


def build_repo(root: Path, *, directories: int, files: int, seed: int = 7) -> list[str]:
    """A monorepo of `directories` dirs in chains of depth 12; returns sample targets."""
    rng = random.Random(seed)
    chains = max(1, directories // DEPTH)
    all_dirs: list[Path] = []
    targets: list[str] = []
    (root / ".prayu" / "rules").mkdir(parents=True)
    (root / "AGENTS.md").write_text(_prose("Root workflow", 6))
    (root / "CLAUDE.md").write_text(_prose("Claude notes", 3))
    (root / ".prayu" / "instructions.md").write_text(_prose("Prayu", 2))
    (root / ".prayu" / "instructions.ignore").write_text("# drafts\n.prayu/rules/drafts/\n")
    for index in range(RULES):
        sub = "go/" if index % 4 == 0 else ""
        rule = root / ".prayu" / "rules" / f"{sub}rule{index:02}.md"
        rule.parent.mkdir(parents=True, exist_ok=True)
        rule.write_text(_prose(f"Rule {index}", 1))
    for chain in range(chains):
        parts = [f"svc{chain:04}"] + [f"l{level:02}" for level in range(1, DEPTH)]
        current = root
        for level, part in enumerate(parts, start=1):
            current = current / part
            current.mkdir(exist_ok=True)
            all_dirs.append(current)
            if chain % 50 == 0:  # instruction files at several levels in some chains
                if level == 3:
                    (current / "AGENTS.md").write_text(_prose("Service", 2))
                elif level == 6:
                    (current / "AGENTS.override.md").write_text(_prose("Override", 1))
                    (current / "AGENTS.md").write_text(_prose("Superseded", 1))
                elif level == 9:
                    (current / ".claude").mkdir()
                    (current / ".claude" / "CLAUDE.md").write_text(_prose("Package", 1))
                elif level == DEPTH:
                    (current / "AGENTS.md").write_text(_prose("Leaf", 1))
        if chain % 50 == 0:
            targets.append("/".join([*parts, "main.go"]))
    for index in range(files):
        directory = all_dirs[rng.randrange(len(all_dirs))]
        (directory / f"f{index}.go").write_text("package x\n")
    return targets


@dataclass
class Trace:
    calls: list[tuple[str, tuple[Any, ...]]]


@contextmanager
def traced() -> Iterator[Trace]:
    """Record the filesystem calls discovery makes (by wrapping the os functions it uses)."""
    trace = Trace([])
    originals: dict[str, Callable[..., Any]] = {}

    def wrap(name: str) -> None:
        original = getattr(os, name)
        originals[name] = original

        def recorder(*args: Any, **kwargs: Any) -> Any:
            trace.calls.append((name, args))
            return original(*args, **kwargs)

        setattr(os, name, recorder)

    for name in ("lstat", "access", "open", "fstat", "pread", "close", "scandir", "readlink"):
        wrap(name)
    try:
        yield trace
    finally:
        for name, original in originals.items():
            setattr(os, name, original)


def replay(trace: Trace) -> None:
    """Only the system calls, in order: lstat/access/scandir by path, open/fstat/pread/close of
    files and the readlink of /proc/self/fd that checks where an open landed."""
    lstat, access, open_, fstat, pread, close, scandir, readlink = (
        os.lstat, os.access, os.open, os.fstat, os.pread, os.close, os.scandir, os.readlink
    )  # fmt: skip
    fd = -1
    for name, args in trace.calls:
        if name == "lstat":
            try:  # noqa: SIM105 - contextlib.suppress would add overhead to the floor
                lstat(args[0])
            except OSError:
                pass
        elif name == "access":
            access(args[0], args[1], follow_symlinks=False)
        elif name == "open":
            fd = open_(args[0], args[1])
        elif name == "fstat":
            fstat(fd)
        elif name == "readlink":
            readlink(f"/proc/self/fd/{fd}")
        elif name == "pread":
            pread(fd, args[1], args[2])
        elif name == "close":
            close(fd)
        elif name == "scandir":
            with scandir(args[0]) as entries:
                for _ in entries:
                    pass


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


@dataclass
class Result:
    floor: float
    cold: float
    warm: float
    syscalls: float
    plain: float


def plain_floor(root: str, target: str, sources: list[str]) -> Callable[[], None]:
    """lstat of each directory on the way to `target`, one read of each source: nothing else."""
    directories = [root]
    for part in target.split("/")[:-1]:
        directories.append(os.path.join(directories[-1], part))
    paths = [os.path.join(root, *source.split("/")) for source in sources]

    def run() -> None:
        for directory in directories:
            os.lstat(directory)
        for path in paths:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.read(fd, 1 << 20)
            finally:
                os.close(fd)

    return run


def measure(root: Path, targets: list[str], *, rounds: int) -> Result:
    root_str = str(root.resolve())
    traces: dict[str, Trace] = {}
    for target in targets:
        with traced() as trace:
            discover("bench", root_str, target, reader=FileReader())
        traces[target] = trace

    floor: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    plain: list[float] = []
    shared = FileReader()
    plains = {}
    for target in targets:  # populate the warm cache
        found = discover("bench", root_str, target, reader=shared)
        plains[target] = plain_floor(root_str, target, [source.path for source in found.sources])
    clock = time.perf_counter
    for _ in range(rounds):
        for target in targets:
            trace = traces[target]
            start = clock()
            replay(trace)
            floor.append(clock() - start)

            reader = FileReader()
            start = clock()
            discover("bench", root_str, target, reader=reader)
            cold.append(clock() - start)

            start = clock()
            discover("bench", root_str, target, reader=shared)
            warm.append(clock() - start)

            run_plain = plains[target]
            start = clock()
            run_plain()
            plain.append(clock() - start)
    syscalls = statistics.median(len(trace.calls) for trace in traces.values())
    return Result(median_us(floor), median_us(cold), median_us(warm), syscalls, median_us(plain))


def probe_vs_listing(root: Path, targets: list[str], *, rounds: int) -> tuple[float, float]:
    """Median cost per directory level of probing the five level names vs listing the level."""
    from rutter_core.discovery.layout import LEVEL_NAMES

    levels: list[str] = []
    for target in targets:
        current = str(root.resolve())
        levels.append(current)
        for part in target.split("/")[:-1]:
            current = os.path.join(current, part)
            levels.append(current)
    probes: list[float] = []
    listings: list[float] = []
    clock = time.perf_counter
    for _ in range(rounds):
        for level in levels:
            start = clock()
            for name in LEVEL_NAMES:  # as FileReader.probe does: access(), lstat if present
                path = os.path.join(level, name)
                if os.access(path, os.F_OK, follow_symlinks=False):
                    os.lstat(path)
            probes.append(clock() - start)
            start = clock()
            with os.scandir(level) as entries:
                for entry in entries:
                    entry.name  # noqa: B018 - touch each entry as a listing-based walk would
            listings.append(clock() - start)
    return median_us(probes), median_us(listings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dirs", type=int, default=10_000)
    parser.add_argument("--small-files", type=int, default=1_000)
    parser.add_argument("--large-files", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="rutter-bench-") as scratch:
        repos: dict[str, tuple[Path, list[str]]] = {}
        for label, files in (("small", args.small_files), ("large", args.large_files)):
            root = Path(scratch) / label
            root.mkdir()
            started = time.perf_counter()
            targets = build_repo(root, directories=args.dirs, files=files)
            built = time.perf_counter() - started
            print(f"built {label}: {args.dirs} dirs, {files} files, {len(targets)} targets "
                  f"in {built:.1f}s")  # fmt: skip
            repos[label] = (root, targets)
        # Files younger than the racy window are (correctly) never cached; let them age.
        time.sleep(DEFAULT_RACY_WINDOW_NS / 1e9 + 0.2)

        results = {label: measure(root, targets, rounds=args.rounds)
                   for label, (root, targets) in repos.items()}  # fmt: skip
        print()
        print(f"load average {os.getloadavg()[0]:.2f}")
        header = f"{'repo':<6} {'syscalls':>8} {'floor µs':>9} {'cold µs':>9} {'warm µs':>9} "
        print(header + f"{'cold/floor':>10} {'warm/floor':>10} {'plain µs':>9} {'warm/plain':>10}")
        for label, result in results.items():
            print(
                f"{label:<6} {result.syscalls:>8.0f} {result.floor:>9.1f} {result.cold:>9.1f} "
                f"{result.warm:>9.1f} {result.cold / result.floor:>10.2f} "
                f"{result.warm / result.floor:>10.2f} {result.plain:>9.1f} "
                f"{result.warm / result.plain:>10.2f}"
            )
        small, large = results["small"], results["large"]
        print()
        cold_ratio, warm_ratio = large.cold / small.cold, large.warm / small.warm
        print(f"large/small cold {cold_ratio:.2f}  warm {warm_ratio:.2f}  "
              f"floor {large.floor / small.floor:.2f}")  # fmt: skip
        print("goals: warm/floor <= 2.0, cold/floor <= 4.0, large/small <= 1.2, warm/plain <= 1.5")
        for label, (root, targets) in repos.items():
            probe, listing = probe_vs_listing(root, targets, rounds=args.rounds)
            print(f"{label}: per level, probing {probe:.1f} µs vs listing {listing:.1f} µs")


if __name__ == "__main__":
    main()
