"""Migration 19 ("compaction_summarizers"), on both engines: a store at migration 15 holding
model compactions written as the code before it wrote them (`command` in the `summarizer`
column, the real kind only in the record's `endpoint`) upgrades to rows that name their real
kind, leaves a true `command` row and an `extractive` one as they were, keeps the table's
indexes (the one-open-per-thread rule still holds) and its reference to the thread, and its
CHECK then refuses a summarizer rutter does not know."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from rutter_core.continuity.compaction import repo
from rutter_core.kernel.errors import RutterError
from rutter_core.store import MIGRATIONS, Store, open_store

pytestmark = pytest.mark.both_dialects

BEFORE = tuple(m for m in MIGRATIONS if m.version <= 15)
"""The migrations of a store made before the model summarizers had a column value of their own."""
NOW = "2026-12-05T10:00:00Z"
WORKSPACE = "demo"
THREAD = "thr_" + "a" * 26
DIGEST = "d" * 64


def _record(endpoint: dict[str, str] | None) -> str:
    """A compaction's record as the service wrote it (`json.dumps(..., sort_keys=True)`)."""
    record: dict[str, Any] = {
        "after_seq": 0,
        "through_seq": 6,
        "input_tokens": 24_000,
        "read_message_count": 6,
        "read_from_seq": 1,
        "first_read_message_id": "msg_" + "1" * 26,
        "last_read_message_id": "msg_" + "6" * 26,
        "messages_sha256": DIGEST,
        "notes": [{"id": "note_" + "2" * 26, "version": 1, "sha256": DIGEST}],
        "previous_summary": None,
        "focus_sha256": None,
        "prompt_sha256": None if endpoint is None else DIGEST,
    }
    if endpoint is not None:
        record["endpoint"] = endpoint
    return json.dumps(record, sort_keys=True)


def _endpoint(kind: str, base_url: str) -> dict[str, str]:
    return {"kind": kind, "base_url": base_url, "model": f"{kind}-model", "key_env": "KEY_VAR"}


def _insert(conn: Any, key: str, summarizer: str, record: str, status: str = "completed") -> None:
    done = status == "completed"
    conn.execute(
        text(
            "INSERT INTO compactions (compaction_id, operation_key, thread_id, request_sha256, "
            "summarizer, status, owner, after_seq, through_seq, observed_seq, kept_json, "
            "compacted_count, unread_count, input_json, summary_text, summary_tokens, "
            "summary_redacted, error_code, created_by, created_at, updated_at) VALUES (:id, "
            ":key, :thread, :digest, :summarizer, :status, 'host:1', 0, 6, 10, :kept, 6, 0, "
            ":record, :summary, :tokens, 0, NULL, 'cli', :now, :now)"
        ),
        {
            "id": "cmp_" + key.ljust(26, "0")[:26],
            "key": key,
            "thread": THREAD,
            "digest": DIGEST,
            "summarizer": summarizer,
            "status": status,
            "kept": json.dumps(["msg_" + "7" * 26]),
            "record": record,
            "summary": "The summary." if done else None,
            "tokens": 4 if done else None,
            "now": NOW,
        },
    )


WRITTEN = {
    # operation key: (what the old code stored in `summarizer`, the record's endpoint)
    "openai-done": ("command", _endpoint("openai", "http://127.0.0.1:8080/v1")),
    "anthropic-done": ("command", _endpoint("anthropic", "https://api.anthropic.com")),
    # a base URL whose text names the other kind: only the endpoint's own `kind` counts
    # (rewritten after `openai` ones, so a record mistaken for one would end up `openai`)
    "anthropic-tricky": ("command", _endpoint("anthropic", 'https://x.test/"kind": "openai"')),
    "a-command": ("command", None),
    "extractive": ("extractive", None),
}


def _old_store(url: str) -> None:
    with open_store(url, migrations=BEFORE) as old, old.write() as conn:
        conn.execute(
            text("INSERT INTO workspaces (workspace_id, root, created_at) VALUES (:w, :r, :now)"),
            {"w": WORKSPACE, "r": "/srv/demo", "now": NOW},
        )
        conn.execute(
            text(
                "INSERT INTO threads (thread_id, workspace_id, status, created_by, created_at, "
                "updated_at) VALUES (:t, :w, 'active', 'cli', :now, :now)"
            ),
            {"t": THREAD, "w": WORKSPACE, "now": NOW},
        )
        for key, (summarizer, endpoint) in WRITTEN.items():
            _insert(conn, key, summarizer, _record(endpoint))
        # a model kind is what migration 15's CHECK refuses: why the old code wrote `command`
        with pytest.raises(IntegrityError), conn.begin_nested():
            _insert(conn, "refused", "openai", _record(None))


def _column(store: Store) -> dict[str, tuple[str, str]]:
    with store.read() as conn:
        rows = conn.execute(
            text("SELECT operation_key, summarizer, input_json FROM compactions")
        ).all()
    return {str(key): (str(summarizer), str(record)) for key, summarizer, record in rows}


def test_model_compactions_written_as_command_get_their_kind(store_url: str) -> None:
    _old_store(store_url)
    with open_store(store_url) as store:
        with store.read() as conn:
            ledger = conn.execute(text("SELECT version FROM schema_migrations"))
            versions = sorted(int(v) for v in ledger.scalars())
        assert versions == sorted(m.version for m in MIGRATIONS)
        assert 19 in versions
        column = _column(store)
        assert {key: summarizer for key, (summarizer, _) in column.items()} == {
            "openai-done": "openai",
            "anthropic-done": "anthropic",
            "anthropic-tricky": "anthropic",
            "a-command": "command",
            "extractive": "extractive",
        }
        # nothing else of a row changed: its record is the text that was written
        assert {key: record for key, (_, record) in column.items()} == {
            key: _record(endpoint) for key, (_, endpoint) in WRITTEN.items()
        }
        with store.read() as conn:
            found = repo.find_by_key(conn, "anthropic-done")
            assert found is not None
            assert (found.summarizer, found.status, found.updated_at) == (
                "anthropic",
                "completed",
                NOW,
            )
            assert found.input["endpoint"]["kind"] == "anthropic"
            indexes = {
                index["name"]: bool(index["unique"])
                for index in inspect(conn).get_indexes("compactions")
            }
        assert indexes["compactions_by_thread"] is False
        assert indexes["compactions_one_open_per_thread"] is True

    # A second open finds everything applied and rewrites nothing.
    with open_store(store_url) as again:
        assert _column(again) == column


def test_afterwards_the_table_takes_model_kinds_and_refuses_unknown_ones(store_url: str) -> None:
    _old_store(store_url)
    with open_store(store_url) as store:
        with store.write() as conn:
            _insert(conn, "new-openai", "openai", _record(_endpoint("openai", "http://x.test")))
            _insert(conn, "open-one", "anthropic", _record(None), status="running")
        for key, summarizer, status, constraint in (
            ("unknown", "gemini", "completed", "check"),
            ("capital", "OpenAI", "completed", "check"),
            # the partial unique index: one running compaction per thread
            ("open-two", "openai", "running", "unique"),
        ):
            with pytest.raises(RutterError) as refused, store.write() as conn:
                _insert(conn, key, summarizer, _record(None), status=status)
            assert refused.value.details["constraint"] == constraint, key
        # the reference to the thread is kept
        with pytest.raises(RutterError) as refused, store.write() as conn:
            conn.execute(
                text("UPDATE compactions SET thread_id = :t WHERE operation_key = 'new-openai'"),
                {"t": "thr_" + "z" * 26},
            )
        assert refused.value.details["constraint"] == "foreign_key"
        assert _column(store)["new-openai"][0] == "openai"
        assert "unknown" not in _column(store)
