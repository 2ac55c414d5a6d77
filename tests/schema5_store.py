"""A store as schema 5 left it, restored from its SQL dump (this module holds no tests):
`main_store`, for the tests of the migrations after it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import write_tree

DUMP = Path(__file__).parent / "fixtures" / "schema5" / "store.sql"
TABLES = (
    "workspaces", "missions", "threads", "sessions", "runs", "continuity_nodes",
    "run_instruction_snapshots", "memories", "messages", "notes", "continuity_snapshots",
)  # fmt: skip
NOW = "2026-12-03T10:00:00Z"


def main_store(tmp_path: Path) -> Path:
    root = (tmp_path / "demo").resolve()
    write_tree(
        root,
        {
            "AGENTS.md": "Run the tests before committing.\n",
            "services/api/AGENTS.md": "API rules.\n",
        },
    )
    db = tmp_path / "rutter.db"
    conn = sqlite3.connect(db)
    try:
        conn.executescript(DUMP.read_text(encoding="utf-8").replace("@WORKSPACE_ROOT@", str(root)))
    finally:
        conn.close()
    return db
