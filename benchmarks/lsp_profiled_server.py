"""The language server under cProfile, every thread (for `lsp_latency.py --profile PATH`).

cProfile only sees the thread that enables it, and the server's disk work runs on a worker
thread, so each new thread enables its own profiler on its first event; at exit all of them
are merged into one pstats file.

Usage: python benchmarks/lsp_profiled_server.py OUT.pstats [rutter-lsp arguments]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import threading
from types import FrameType
from typing import Any

USAGE = "usage: python benchmarks/lsp_profiled_server.py OUT.pstats [rutter-lsp arguments]\n"


def main() -> int:
    # The first argument names a file to write: refuse anything that looks like an option, so
    # `--help` prints this instead of writing a profile named `--help`.
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.stderr.write(USAGE)
        return 0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2
    out, argv = sys.argv[1], sys.argv[2:]
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start(frame: FrameType, event: str, arg: Any) -> None:
        profile = cProfile.Profile()
        with lock:
            profiles.append(profile)
        profile.enable()  # replaces this hook in this thread

    threading.setprofile(start)
    from rutter_lsp.serve import main as server_main

    main_profile = cProfile.Profile()
    main_profile.enable()
    try:
        code = server_main(argv)
    finally:
        main_profile.disable()
        stats = pstats.Stats(main_profile)
        with lock:
            for profile in profiles:
                profile.disable()
                stats.add(profile)
        stats.dump_stats(out)
    return code


if __name__ == "__main__":
    sys.exit(main())
