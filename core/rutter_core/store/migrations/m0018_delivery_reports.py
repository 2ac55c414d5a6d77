"""Migration 18: delivery reports (issue 30, docs/reference/runs.md). Numbered 18 so that it
cannot collide with the migrations of work done beside it. Released: never edit it.

- `delivery_reports`: append-only, one row per report on a run's delivery: whether the
  delivery was checked and `passed` or `failed`, a summary (redacted text, at most 4 KiB) and
  what it points at (paths, URLs, other identifiers: a JSON array of strings). A run's newest
  report that passed is a completion record for experience candidates; a later failed report
  takes that back. A report changes nothing about its run.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    18,
    "delivery_reports",
    (
        """
        CREATE TABLE delivery_reports (
            report_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(report_id, 1, 4) = 'dlv_' AND length(report_id) = 30),
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            result TEXT NOT NULL CHECK (result IN ('passed', 'failed')),
            summary TEXT NOT NULL CHECK (length(summary) >= 1),
            summary_redacted INTEGER NOT NULL CHECK (summary_redacted IN (0, 1)),
            references_json TEXT NOT NULL CHECK (substr(references_json, 1, 1) = '['),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE INDEX delivery_reports_by_run ON delivery_reports (run_id, created_at)",
    ),
    append_only=("delivery_reports",),
    key_guards=(KeyGuard("delivery_reports", (UniqueKey(("report_id",)),)),),
)
