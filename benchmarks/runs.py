"""Runs against plain discovery, measured in the same run.

Every run operation re-runs discovery for the run's target (inspect compares the pinned
snapshot with it; a confirmation re-discovers under the write lock), and adds store work: the
pinned revision is read and verified (its fingerprint and every source's content hash) on
each read. This prints medians, in a warm interpreter with a warm `FileReader`, of:

- discover: `discover()` of the target (the baseline);
- inspect: `inspect_run` (store read + verification + discovery + diff);
- confirm (no change): `confirm_refresh` when nothing drifted (BEGIN IMMEDIATE + discovery);
- create: `create_run` (one write transaction of six rows + discovery);
- list: `list_runs` of all runs (active only), for the number of runs given;

and each one's ratio to discover. The language server re-inspects every active run of the
served workspaces when instruction files or the store change, so inspect/discover times the
number of active runs is what a change costs there.

Usage: python benchmarks/runs.py [--runs 200] [--repeat 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rutter_core.app.facade import machine_sources
from rutter_core.discovery.fsread import DEFAULT_RACY_WINDOW_NS, FileReader
from rutter_core.discovery.walk import discover
from rutter_core.runs.service import confirm_refresh, create_run, inspect_run, list_runs
from rutter_core.store import open_store
from rutter_core.workspaces.machine import machine_id
from rutter_core.workspaces.service import register_workspace

DEPTH = 12
PROSE = (
    "- Run the unit tests before you propose a change; keep the build green.\n"
    "- Prefer small, reviewable commits; reference the issue in the message.\n"
)


def build(root: Path) -> str:
    """A depth-12 target with instruction files at several levels and 20 rules."""
    (root / ".prayu" / "rules" / "go").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Root\n" + PROSE * 6)
    (root / "CLAUDE.md").write_text("# Claude\n" + PROSE * 3)
    for index in range(20):
        sub = "go/" if index % 4 == 0 else ""
        (root / ".prayu" / "rules" / f"{sub}rule{index:02}.md").write_text(PROSE)
    parts = [f"l{level:02}" for level in range(DEPTH)]
    current = root
    for level, part in enumerate(parts):
        current = current / part
        current.mkdir()
        if level in (3, 7, DEPTH - 1):
            (current / "AGENTS.md").write_text(f"# Level {level}\n" + PROSE * 2)
    return "/".join([*parts, "main.go"])


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs in the store for `list`")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        target = build(root)
        # Files younger than the racy window are re-read on every discovery (fsread): wait
        # it out, so every operation measures the warm path an editor session sees.
        time.sleep(DEFAULT_RACY_WINDOW_NS / 1e9 + 0.2)
        store = open_store(f"sqlite:///{Path(tmp) / 'rutter.db'}")
        register_workspace(
            store, "bench", root, cwd=root, machine=machine_id(machine_sources(os.environ))
        )
        reader = FileReader()
        resolved = str(root.resolve())
        run = create_run(
            store, workspace_id="bench", goal="bench", reader=reader, actor="cli", target=target
        )
        for _ in range(args.runs - 1):
            create_run(
                store, workspace_id="bench", goal="bench", reader=reader, actor="cli",
                target=target,
            )  # fmt: skip
        fingerprint = run.fingerprint
        timings = {
            "discover": median_ms(
                lambda: discover("bench", resolved, target, reader=reader), args.repeat
            ),
            "inspect": median_ms(
                lambda: inspect_run(store, run.run_id, reader=reader), args.repeat
            ),
            "confirm (no change)": median_ms(
                lambda: confirm_refresh(
                    store,
                    run.run_id,
                    reader=reader,
                    expected_fingerprint=fingerprint,
                    expected_live_fingerprint=fingerprint,
                    actor="cli",
                ),
                args.repeat,
            ),
            "create": median_ms(
                lambda: create_run(
                    store,
                    workspace_id="bench",
                    goal="bench",
                    reader=reader,
                    actor="cli",
                    target=target,
                ),
                max(20, args.repeat // 4),
            ),
            f"list ({args.runs}+ runs)": median_ms(
                lambda: list_runs(store, active_only=True), max(20, args.repeat // 4)
            ),
        }
        store.close()
        sources = len(discover_sources(root, target))
    baseline = timings["discover"]
    print(f"target depth {DEPTH}, {sources} sources")
    print(f"{'operation':<24} {'median ms':>10} {'x discover':>11}")
    for name, value in timings.items():
        print(f"{name:<24} {value:10.3f} {value / baseline:11.2f}")


def discover_sources(root: Path, target: str) -> list[str]:
    snapshot = discover("bench", str(root.resolve()), target, reader=FileReader())
    return [source.path for source in snapshot.sources]


if __name__ == "__main__":
    main()
