"""Is reading detect-secrets' patterns with `ast` (redaction/upstream.py) worth keeping over
importing its plugins lazily? Whole-process CPU (user + system, `RUSAGE_CHILDREN`), medians of
paired rounds, of four fresh processes:

- the floor: `import sqlite3, json` (the baseline of the CLI's cold-start goals);
- rutter's redaction with every rule built from the parsed plugin files (what a cold
  `rutter context instructions --json` pays for redaction today);
- the detect-secrets plugin modules redaction uses, imported (what a lazy import would add: it
  runs the package's `__init__`, its scanner and `requests`);
- both (redaction as it would be with the lazy import on top).

The goal: the device stays only if the import costs a figure a user feels on a cold CLI call
(the `context instructions --json` goal is 16x the floor; the import is compared with it).

    cd benchmarks && ../.venv/bin/python redaction_upstream.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

PLUGINS = ("github_token", "gitlab_token", "slack", "openai", "aws", "pypi_token", "keyword",
           "sendgrid", "twilio", "square_oauth")  # fmt: skip
IMPORT_PLUGINS = "import " + ", ".join(f"detect_secrets.plugins.{name}" for name in PLUGINS)
REDACT = "from rutter_core.discovery.redaction.engine import find_secrets; find_secrets('x = 1')"
CASES = {
    "floor: import sqlite3, json": "import sqlite3, json",
    "redaction, rules from the parsed plugin files": REDACT,
    "import the 10 detect-secrets plugins used": IMPORT_PLUGINS,
    "redaction + those imports (a lazy import)": f"{IMPORT_PLUGINS}; {REDACT}",
}


def cpu_ms(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Run outside benchmarks/ (its http.py would shadow the standard library's).
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tempfile.gettempdir())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return spent * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(rounds):
        for name, code in CASES.items():  # paired: each round runs every case once
            samples[name].append(cpu_ms(code))
    floor = statistics.median(samples["floor: import sqlite3, json"])
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} paired rounds")
    print(f"  {'process':48} {'CPU ms':>7} {'x floor':>8}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:48} {median:7.1f} {median / floor:8.2f}")
    print("  goal: the lazy import is kept out if it adds more than a floor's worth (1x)")


if __name__ == "__main__":
    main()
