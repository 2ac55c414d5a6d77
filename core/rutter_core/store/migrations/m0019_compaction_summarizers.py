"""Migration 19: a compaction's row names its real summarizer, the model ones included
(docs/reference/continuity.md). Numbered 19 so that it cannot collide with the migrations of
work done beside it (16, 17 and 18 are other issues'); it depends on none of them.
Released: never edit it.

- `compactions.summarizer` admits `openai` and `anthropic` beside `extractive` and `command`.
  The table is rebuilt with the wider CHECK (a CHECK cannot be changed in place everywhere;
  the dialect decides how, `TableRebuild`), keeping every row, and its two indexes (the partial
  unique `compactions_one_open_per_thread` among them) are created again as migration 15 made
  them. It has no append-only guard.
- Before this migration a model compaction was stored as `command`, its kind only in its record
  (`input_json`'s `endpoint.kind`). Such rows are rewritten to their kind. The record was always
  written as `json.dumps(record, sort_keys=True)`, and only its `endpoint` object has a `kind`
  key: the text `"kind": "openai"` (quotes unescaped) is in a record exactly when that record's
  endpoint is `openai` (a string value cannot hold it, its quotes being escaped), and so for
  `anthropic`; the statement looks for that exact text, case and all. A `command`
  compaction's record has no endpoint, so no `command` row is touched but those; nothing else
  of a row changes (`updated_at` included: no operation happened).
"""

from rutter_core.store.migrations.migration import Migration, TableRebuild

_COMPACTIONS = """
    compaction_id TEXT NOT NULL PRIMARY KEY
        CHECK (substr(compaction_id, 1, 4) = 'cmp_' AND length(compaction_id) = 30),
    operation_key TEXT NOT NULL UNIQUE
        CHECK (length(operation_key) BETWEEN 1 AND 128),
    thread_id TEXT NOT NULL REFERENCES threads (thread_id),
    request_sha256 TEXT NOT NULL CHECK (length(request_sha256) = 64),
    summarizer TEXT NOT NULL
        CHECK (summarizer IN ('extractive', 'command', 'openai', 'anthropic')),
    status TEXT NOT NULL CHECK (status IN
        ('running', 'completed', 'failed', 'pending_verification', 'abandoned')),
    owner TEXT NOT NULL CHECK (length(owner) BETWEEN 1 AND 300),
    after_seq INTEGER NOT NULL CHECK (after_seq >= 0),
    through_seq INTEGER NOT NULL CHECK (through_seq > after_seq),
    observed_seq INTEGER NOT NULL CHECK (observed_seq >= through_seq),
    kept_json TEXT NOT NULL CHECK (length(kept_json) > 1),
    compacted_count INTEGER NOT NULL CHECK (compacted_count >= 1),
    unread_count INTEGER NOT NULL CHECK (unread_count >= 0),
    input_json TEXT NOT NULL CHECK (length(input_json) > 1),
    summary_text TEXT CHECK (summary_text IS NULL OR length(summary_text) >= 1),
    summary_tokens INTEGER CHECK (summary_tokens IS NULL OR summary_tokens >= 1),
    summary_redacted INTEGER NOT NULL CHECK (summary_redacted IN (0, 1)),
    error_code TEXT CHECK (error_code IS NULL OR length(error_code) BETWEEN 1 AND 64),
    created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control', 'mcp')),
    created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
    updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z'),
    CHECK ((status = 'completed') = (summary_text IS NOT NULL)),
    CHECK ((status = 'completed') = (summary_tokens IS NOT NULL)),
    CHECK (status <> 'failed' OR error_code IS NOT NULL)
"""

_COLUMNS = (
    "compaction_id",
    "operation_key",
    "thread_id",
    "request_sha256",
    "summarizer",
    "status",
    "owner",
    "after_seq",
    "through_seq",
    "observed_seq",
    "kept_json",
    "compacted_count",
    "unread_count",
    "input_json",
    "summary_text",
    "summary_tokens",
    "summary_redacted",
    "error_code",
    "created_by",
    "created_at",
    "updated_at",
)


def _real_kind(kind: str) -> str:
    # "input_json holds the text": removing it shortens it. Neither LIKE (case-insensitive on
    # one engine, and its `%` a parameter marker to one driver) nor a JSON function (each
    # engine has its own) is the same on both engines; `replace` and `length` are.
    marker = f'"kind": "{kind}"'
    return (
        f"UPDATE compactions SET summarizer = '{kind}' WHERE summarizer = 'command' "
        f"AND length(replace(input_json, '{marker}', '')) < length(input_json)"
    )


MIGRATION = Migration(
    19,
    "compaction_summarizers",
    (
        "CREATE INDEX compactions_by_thread ON compactions (thread_id, status, through_seq)",
        """
        CREATE UNIQUE INDEX compactions_one_open_per_thread ON compactions (thread_id)
            WHERE status IN ('running', 'pending_verification')
        """,
        _real_kind("openai"),
        _real_kind("anthropic"),
    ),
    rebuilds=(TableRebuild("compactions", _COMPACTIONS, _COLUMNS),),
)
