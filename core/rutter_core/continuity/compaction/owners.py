"""Which process runs a compaction: its owner, `host:pid:start`, and whether that process may
still be running it (a dead owner's compaction is `pending_verification`, never re-sent)."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from pathlib import Path

from rutter_core.continuity.compaction.model import STALE_AFTER_SECONDS


def _start_ticks(pid: int) -> str:
    try:
        with Path(f"/proc/{pid}/stat").open(encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return "-"
    if fields and fields[0] == "Z":
        return "zombie"
    return fields[19] if len(fields) > 19 else "-"


def current_owner() -> str:
    """This process, as `host:pid:start` (the start time tells a reused PID apart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_ticks(os.getpid())}"


def owner_alive(owner: str, updated_at: str) -> bool:
    """Whether the process that stored a `running` compaction may still be running it: never
    once it is older than any summarizer may run; else, on this host, whether that process
    (same PID, same start) still exists; on another host, it cannot be told, so yes."""
    updated = datetime.strptime(updated_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    if (datetime.now(UTC) - updated).total_seconds() > STALE_AFTER_SECONDS:
        return False
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return True
    pid, ticks = int(parts[1]), parts[2]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now_ticks = _start_ticks(pid)
    return now_ticks != "zombie" and ticks in ("-", now_ticks)


__all__ = ["current_owner", "owner_alive"]
