"""The current shape of every table, as SQLAlchemy Core objects for queries.

Which text is the single source of what: the DDL is written once, in `store/migrations/`.
Migrations are history: a store records each one's checksum and refuses to open when a
released one changes, so they can be neither generated from this module nor edited to follow
it. This module is the *current* shape (tables, columns with their types and nullability, keys,
foreign keys, indexes, which tables are append-only) that queries are written against; it is
never used to create anything. `tests/test_store_schema.py` migrates a fresh store and checks
that what the migrations built equals this metadata, so the two cannot drift: a schema change
is a new migration plus the matching edit here. CHECK constraints and the guards' text live
only in the migrations (the database's backstop; the code validates first).

`info={"append_only": True}` marks the tables whose rows are never updated, deleted or
replaced (docs/reference/store.md); `info={"where": ...}` the predicate of a partial index.
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, MetaData, String, Table

metadata = MetaData()

schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("name", String, nullable=False),
    Column("checksum", String, nullable=False),
    Column("applied_at", String, nullable=False),
)

projects = Table(
    "projects",
    metadata,
    Column("project_id", String, primary_key=True),
    Column("source", String, nullable=False),
    Column("created_at", String, nullable=False),
)
"""Project identities (migration 16): what several workspace registrations share."""

workspaces = Table(
    "workspaces",
    metadata,
    Column("workspace_id", String, primary_key=True),
    # NULL: a registration removed while its project has others, kept for its records.
    Column("root", String, nullable=True),
    Column("created_at", String, nullable=False),
    # Nullable only as SQL can add it (migration 16); every registration has one.
    Column("project_id", String, ForeignKey("projects.project_id"), nullable=True),
    # The machine whose location it is (migration 20); NULL: registered before machines were
    # known, taken by the first machine that looks its root up.
    Column("machine_id", String, nullable=True),
    Index("workspaces_by_project", "project_id"),
    Index("workspaces_one_root_per_machine", "machine_id", "root", unique=True),
)

missions = Table(
    "missions",
    metadata,
    Column("mission_id", String, primary_key=True),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("goal", String, nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
)

threads = Table(
    "threads",
    metadata,
    Column("thread_id", String, primary_key=True),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
)

sessions = Table(
    "sessions",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("mission_id", String, ForeignKey("missions.mission_id"), nullable=False),
    Column("session_id", String, ForeignKey("sessions.session_id"), nullable=False),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("profile", String, nullable=True),
    Column("mode", String, nullable=False),
    Column("target_path", String, nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Column("updated_by_person", String, nullable=True),
    Index("runs_by_workspace", "workspace_id", "status"),
    Index("runs_by_thread", "thread_id"),
)

continuity_nodes = Table(
    "continuity_nodes",
    metadata,
    Column("node_id", String, primary_key=True),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=False),
    Column("session_id", String, ForeignKey("sessions.session_id"), nullable=False),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("parent_node_id", String, ForeignKey("continuity_nodes.node_id"), nullable=True),
    Column("kind", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Index(
        "continuity_nodes_one_root_per_run", "run_id", unique=True, info={"where": "kind = 'root'"}
    ),
    Index("continuity_nodes_by_session", "session_id"),
    Index("continuity_nodes_by_run", "run_id", "kind"),
    info={"append_only": True},
)

run_instruction_snapshots = Table(
    "run_instruction_snapshots",
    metadata,
    Column("run_id", String, ForeignKey("runs.run_id"), primary_key=True),
    Column("revision", Integer, primary_key=True),
    Column("snapshot_json", String, nullable=False),
    Column("fingerprint", String, nullable=False),
    Column("confirmed_by", String, nullable=False),
    Column("confirmed_at", String, nullable=False),
    Column("replaces_fingerprint", String, nullable=True),
    Column("confirmed_by_person", String, nullable=True),
    info={"append_only": True},
)

memories = Table(
    "memories",
    metadata,
    Column("memory_id", String, primary_key=True),
    Column("scope", String, nullable=False),
    Column("scope_id", String, nullable=False),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=True),
    Column("title", String, nullable=False),
    Column("content", String, nullable=False),
    Column("content_sha256", String, nullable=False),
    Column("status", String, nullable=False),
    Column("source_kind", String, nullable=False),
    Column("references_json", String, nullable=False),
    Column("retention_until", String, nullable=True),
    Column("redacted", Integer, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("owner", String, nullable=True),
    Column("created_by_person", String, nullable=True),
    Column("updated_by_person", String, nullable=True),
    Index("memories_by_workspace", "workspace_id"),
)
# Lists are per scope, newest change first.
Index(
    "memories_by_scope",
    memories.c.scope,
    memories.c.scope_id,
    memories.c.updated_at.desc(),
    memories.c.memory_id.desc(),
)

messages = Table(
    "messages",
    metadata,
    Column("message_id", String, primary_key=True),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("role", String, nullable=False),
    Column("text", String, nullable=False),
    Column("redacted", Integer, nullable=False),
    Column("source", String, nullable=False),
    Column("external_id", String, nullable=True),
    Column("created_at", String, nullable=False),
    Column("injected", String, nullable=True),
    Column("source_person", String, nullable=True),
    Index("messages_by_thread", "thread_id", "seq", unique=True),
    Index("messages_by_external_id", "thread_id", "source", "external_id", unique=True),
    info={"append_only": True},
)

notes = Table(
    "notes",
    metadata,
    Column("note_id", String, primary_key=True),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("kind", String, nullable=False),
    Column("text", String, nullable=False),
    Column("redacted", Integer, nullable=False),
    Column("status", String, nullable=False),
    Column("superseded_by", String, ForeignKey("notes.note_id"), nullable=True),
    Column("version", Integer, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("references_json", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Column("updated_by_person", String, nullable=True),
    Index("notes_by_thread", "thread_id", "kind", "status"),
)

continuity_snapshots = Table(
    "continuity_snapshots",
    metadata,
    Column("node_id", String, ForeignKey("continuity_nodes.node_id"), primary_key=True),
    Column("protocol_version", String, nullable=False),
    Column("title", String, nullable=False),
    Column("snapshot_json", String, nullable=False),
    Column("fingerprint", String, nullable=False),
    info={"append_only": True},
)

pin_proposals = Table(
    "pin_proposals",
    metadata,
    Column("proposal_id", String, primary_key=True),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=True),
    Column("text", String, nullable=False),
    Column("redacted", Integer, nullable=False),
    Column("proposed_by", String, nullable=False),
    Column("status", String, nullable=False),
    Column("choice", String, nullable=True),
    Column("reply", String, nullable=True),
    Column("reply_redacted", Integer, nullable=False),
    Column("pin_id", String, nullable=True),
    Column("answered_by", String, nullable=True),
    Column("created_at", String, nullable=False),
    Column("answered_at", String, nullable=True),
    Column("proposed_by_person", String, nullable=True),
    Column("answered_by_person", String, nullable=True),
    Index("pin_proposals_by_status", "status", "workspace_id"),
    Index("pin_proposals_by_thread", "thread_id"),
)

pins = Table(
    "pins",
    metadata,
    Column("pin_id", String, primary_key=True),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("text", String, nullable=False),
    Column("redacted", Integer, nullable=False),
    Column("proposal_id", String, ForeignKey("pin_proposals.proposal_id"), nullable=True),
    Column("version", Integer, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Column("updated_by_person", String, nullable=True),
    Index("pins_by_thread", "thread_id"),
)

transcript_imports = Table(
    "transcript_imports",
    metadata,
    Column("source", String, primary_key=True),
    Column("external_session_id", String, primary_key=True),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Index("transcript_imports_by_thread", "thread_id"),
    info={"append_only": True},
)

history_entries = Table(
    "history_entries",
    metadata,
    Column("entry_id", Integer, primary_key=True),
    Column("source_kind", String, nullable=False),
    Column("source_id", String, nullable=False),
    Column("owner_id", String, nullable=False),
    Column("workspace_id", String, nullable=True),
    Column("version", Integer, nullable=False),
    Column("content_sha256", String, nullable=False),
    Column("expires_at", String, nullable=True),
    Column("person", String, nullable=True),
    Index("history_entries_by_source", "source_id", unique=True),
    Index("history_entries_by_owner", "owner_id", "entry_id"),
)

history_state = Table(
    "history_state",
    metadata,
    Column("state_id", Integer, primary_key=True),
    Column("last_entry_id", Integer, nullable=False),
    Column("secret", String, nullable=True),
    Column("backfill_pending", Integer, nullable=False),
)

memory_text_shards: tuple[str, ...] = tuple(
    f"history_memory_text_{number:02d}" for number in range(16)
)
"""The memory index of history search, in shards: an entry's text is in
`memory_text_shards[entry_id % len(memory_text_shards)]` (migration 12)."""

full_text_tables: tuple[str, ...] = ("history_text", *memory_text_shards)
"""Full-text tables: made by the dialect (`Dialect.full_text_table`), one searchable `body`
and an integer key (`Dialect.full_text_key`), the entry's ID. Their engine-made companion
tables are not described here; `store.fulltext` is how repos use them."""
context_assemblies = Table(
    "context_assemblies",
    metadata,
    Column("assembly_id", String, primary_key=True),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=False),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("budget", Integer, nullable=False),
    Column("fingerprint", String, nullable=False),
    Column("document_json", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Index("context_assemblies_by_run", "run_id", "assembly_id"),
    info={"append_only": True},
)

context_assembly_reports = Table(
    "context_assembly_reports",
    metadata,
    Column("assembly_id", String, ForeignKey("context_assemblies.assembly_id"), primary_key=True),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("followed_json", String, nullable=False),
    Column("ignored_json", String, nullable=False),
    Column("reported_by", String, nullable=False),
    Column("reported_at", String, nullable=False),
    Column("reported_by_person", String, nullable=True),
    info={"append_only": True},
)

compactions = Table(
    "compactions",
    metadata,
    Column("compaction_id", String, primary_key=True),
    Column("operation_key", String, nullable=False, unique=True),
    Column("thread_id", String, ForeignKey("threads.thread_id"), nullable=False),
    Column("request_sha256", String, nullable=False),
    Column("summarizer", String, nullable=False),
    Column("status", String, nullable=False),
    Column("owner", String, nullable=False),
    Column("after_seq", Integer, nullable=False),
    Column("through_seq", Integer, nullable=False),
    Column("observed_seq", Integer, nullable=False),
    Column("kept_json", String, nullable=False),
    Column("compacted_count", Integer, nullable=False),
    Column("unread_count", Integer, nullable=False),
    Column("input_json", String, nullable=False),
    Column("summary_text", String, nullable=True),
    Column("summary_tokens", Integer, nullable=True),
    Column("summary_redacted", Integer, nullable=False),
    Column("error_code", String, nullable=True),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Index("compactions_by_thread", "thread_id", "status", "through_seq"),
    Index(
        "compactions_one_open_per_thread",
        "thread_id",
        unique=True,
        info={"where": "status IN ('running', 'pending_verification')"},
    ),
)
"""A thread's compactions (migration 15; its `summarizer` CHECK widened by migration 19): the
summary and the range of messages it covers are written together when it completes; messages
themselves are never touched."""

branch_operations = Table(
    "branch_operations",
    metadata,
    Column("operation_key", String, primary_key=True),
    Column("kind", String, nullable=False),
    Column("node_id", String, ForeignKey("continuity_nodes.node_id"), nullable=False),
    Column("request_sha256", String, nullable=False),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=False),
    Column("marker_node_id", String, ForeignKey("continuity_nodes.node_id"), nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    info={"append_only": True},
)
"""The operation keys of resumes and forks and the run each made (migration 15)."""

http_tokens = Table(
    "http_tokens",
    metadata,
    Column("token_id", String, primary_key=True),
    Column("scope", String, nullable=False),
    Column("secret_sha256", String, nullable=False, unique=True),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("revoked_at", String, nullable=True),
    Column("owner", String, nullable=True),
    Column("created_by_person", String, nullable=True),
)

checkpoint_deliveries = Table(
    "checkpoint_deliveries",
    metadata,
    Column("node_id", String, ForeignKey("continuity_nodes.node_id"), primary_key=True),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Index("checkpoint_deliveries_by_run", "run_id"),
    info={"append_only": True},
)

delivery_reports = Table(
    "delivery_reports",
    metadata,
    Column("report_id", String, primary_key=True),
    Column("run_id", String, ForeignKey("runs.run_id"), nullable=False),
    Column("result", String, nullable=False),
    Column("summary", String, nullable=False),
    Column("summary_redacted", Integer, nullable=False),
    Column("references_json", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("created_by_person", String, nullable=True),
    Index("delivery_reports_by_run", "run_id", "created_at"),
    info={"append_only": True},
)

memory_candidates = Table(
    "memory_candidates",
    metadata,
    Column("candidate_id", String, primary_key=True),
    Column("workspace_id", String, ForeignKey("workspaces.workspace_id"), nullable=False),
    Column("note_id", String, nullable=False),
    Column("note_version", Integer, nullable=False),
    Column("thread_id", String, nullable=False),
    Column("run_id", String, nullable=True),
    Column("fingerprint", String, nullable=False),
    Column("completion_kind", String, nullable=False),
    Column("completion_at", String, nullable=False),
    Column("status", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("memory_id", String, nullable=True),
    Column("reviewed_by", String, nullable=False),
    Column("reviewed_at", String, nullable=False),
    Column("reviewed_by_person", String, nullable=True),
    Index("memory_candidates_by_note", "note_id", "note_version"),
    Index("memory_candidates_by_workspace", "workspace_id"),
    info={"append_only": True},
)
