"""The CLI as scripts call it: whole-process CPU of a cold start, and many targets in one
process, each against its baseline measured in the same run.

1. Cold start. CPU time (user + system, `RUSAGE_CHILDREN`) of whole processes, medians of
   paired runs (one of each per round, so both see the same machine):
   - baseline: `python -c 'import sqlite3, json'` (an interpreter that can open a store and
     print JSON, and nothing else);
   - `rutter --help`, goal <= 3x the baseline;
   - `rutter workspace list --json`;
   - `rutter context instructions --target T --json` on the discovery benchmark's repository
     (a depth-12 target, 27 sources), goal <= 4x the baseline;
   - the floor: processes that only import what that command cannot do without (pydantic's
     BaseModel for the app's models, typer for the CLI's commands, SQLAlchemy with its SQLite
     dialect for the store), each alone and all together, then with rutter's own modules the
     command imports (nothing run); the cyclic collector is paused while they import and what
     they imported frozen, as `rutter` does (`rutter_cli.main.main`).
2. Batch. `rutter context instructions --targets-from FILE --json` for N targets (files of
   the same repository, many directories) as one process, against N in-process `discover()`
   calls of the same targets with a warm interpreter and a fresh `FileReader`: goal <= 1.5x.

The measured processes run compiled bytecode, as an installed rutter does: the workspace's
own packages are compiled first (`make sync` does it too), since an editable install's modules
are otherwise compiled from source at every start when PYTHONDONTWRITEBYTECODE is set.

Usage: python benchmarks/cli.py [--rounds 7] [--targets 1000] [--dirs 3000]
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from discovery import build_repo

import rutter
import rutter_cli
import rutter_core
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import discover

RUTTER = [sys.executable, "-m", "rutter"]


def cpu_of(command: list[str], *, cwd: Path, env: dict[str, str], stdin: bytes = b"") -> float:
    """CPU seconds (user + system) the process and its children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        command, cwd=cwd, env=env, input=stdin, capture_output=True, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{command} failed: {result.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compile_sources() -> None:
    """Bytecode for the packages the measured commands import from the checkout."""
    for package in (rutter_core, rutter_cli, rutter):
        assert package.__file__ is not None
        if not compileall.compile_dir(Path(package.__file__).parent, quiet=1):
            raise SystemExit(f"{package.__name__} does not compile")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--dirs", type=int, default=3000)
    args = parser.parse_args()
    compile_sources()
    with tempfile.TemporaryDirectory(prefix="rutter-cli-bench-") as scratch:
        base = Path(scratch).resolve()
        root = base / "repo"
        targets = build_repo(root, directories=args.dirs, files=args.targets * 2)
        files = sorted(str(path.relative_to(root)) for path in root.rglob("*.go") if path.is_file())
        batch = random.Random(5).sample(files, min(args.targets, len(files)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
        env["RUTTER_HOME"] = str(base / "home")
        cpu_of([*RUTTER, "workspace", "register", "bench", str(root)], cwd=base, env=env)
        time.sleep(2.2)  # past the racy window: the files count as settled
        target = targets[0]
        commands = {
            "baseline": [sys.executable, "-c", "import sqlite3, json"],
            "rutter --help": [*RUTTER, "--help"],
            "rutter workspace list --json": [*RUTTER, "workspace", "list", "--json"],
            "rutter context instructions --json": [
                *RUTTER, "context", "instructions", "--target", target, "--json",
            ],
        }  # fmt: skip
        floor = {
            "from pydantic import BaseModel": "from pydantic import BaseModel",
            "import typer": "import typer",
            "import sqlalchemy (+ sqlite dialect)": "import sqlalchemy.dialects.sqlite",
            "pydantic and typer (no store)": "import typer; from pydantic import BaseModel",
            "all three": "import sqlalchemy.dialects.sqlite, typer; from pydantic import BaseModel",
            # What the command imports of rutter's own (and, through it, the three): no work.
            "+ rutter's modules for it": "import rutter_cli.main, rutter_cli.root, "
            "rutter_cli.instructions, rutter_core.store, rutter_core.app.facade",
        }
        commands.update(
            {
                name: [sys.executable, "-c", f"import gc; gc.disable(); {code}; gc.freeze()"]
                for name, code in floor.items()
            }
        )
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                samples[name].append(cpu_of(command, cwd=root, env=env))
        goals = {"rutter --help": 3.0, "rutter context instructions --json": 4.0}
        baseline = statistics.median(samples["baseline"])
        print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} paired rounds")
        print(f"1. cold start, whole-process CPU (median), target {target}")
        print(f"  {'command':<38} {'CPU ms':>8} {'x baseline':>10}  goal")
        for name, found in samples.items():
            if name == next(iter(floor)):
                print("  the floor: a process that only imports")
            cpu = statistics.median(found)
            goal = f"<= {goals[name]:.0f}x" if name in goals else ""
            print(f"  {name:<38} {cpu * 1e3:>8.1f} {cpu / baseline:>10.2f}  {goal}")

        listing = "\n".join(batch).encode() + b"\n"
        command = [*RUTTER, "context", "instructions", "--targets-from", "-", "--json"]
        batch_cpu: list[float] = []
        in_process: list[float] = []
        for _ in range(max(3, args.rounds // 2)):
            batch_cpu.append(cpu_of(command, cwd=root, env=env, stdin=listing))
            started = time.process_time()
            reader = FileReader()
            for item in batch:
                discover("bench", str(root), item, reader=reader)
            in_process.append(time.process_time() - started)
        mine, base_cpu = statistics.median(batch_cpu), statistics.median(in_process)
        print(f"\n2. {len(batch)} targets (CPU, median of {len(batch_cpu)})")
        print(f"  {'in-process discover() x N (baseline)':<38} {base_cpu * 1e3:>8.1f}")
        print(
            f"  {'--targets-from, one process':<38} {mine * 1e3:>8.1f} {mine / base_cpu:>10.2f}"
            "  <= 1.5x"
        )


if __name__ == "__main__":
    main()
