"""Ordered schema migrations, applied on open and recorded with a checksum
(docs/reference/store.md).

One module per migration (`mNNNN_name.py`, exporting `MIGRATION`), listed below in order.
Migrations are immutable once released (stores record their checksums and refuse to open
when one changes): to change the schema, append a new module and update `store/schema.py`,
the current shape, to match (see its docstring for how the two are held together).
"""

from rutter_core.store.migrations import (
    m0001_workspaces,
    m0002_runs,
    m0003_memory,
    m0004_append_only_keys,
    m0005_continuity_content,
    m0006_pins,
    m0007_transcript_imports,
    m0008_history,
    m0009_http_tokens,
    m0010_assembly_audit,
    m0011_memory_index_repair,
    m0012_memory_index_shards,
    m0013_message_injected,
    m0014_memory_candidates,
    m0015_compactions,
    m0016_projects,
    m0017_people,
    m0018_delivery_reports,
    m0019_compaction_summarizers,
    m0020_machines,
    m0021_record_people,
    m0023_member_purge,
)
from rutter_core.store.migrations.migration import (
    FullTextSplit,
    KeyGuard,
    Migration,
    TableRebuild,
    canonical_statement,
    migration_checksum,
)
from rutter_core.store.migrations.runner import apply_migrations, check_migration_list

MIGRATIONS: tuple[Migration, ...] = (
    m0001_workspaces.MIGRATION,
    m0002_runs.MIGRATION,
    m0003_memory.MIGRATION,
    m0004_append_only_keys.MIGRATION,
    m0005_continuity_content.MIGRATION,
    m0006_pins.MIGRATION,
    m0007_transcript_imports.MIGRATION,
    m0008_history.MIGRATION,
    m0009_http_tokens.MIGRATION,
    m0010_assembly_audit.MIGRATION,
    m0011_memory_index_repair.MIGRATION,
    m0012_memory_index_shards.MIGRATION,
    m0013_message_injected.MIGRATION,
    m0014_memory_candidates.MIGRATION,
    m0015_compactions.MIGRATION,
    m0016_projects.MIGRATION,
    m0017_people.MIGRATION,
    m0018_delivery_reports.MIGRATION,
    m0019_compaction_summarizers.MIGRATION,
    m0020_machines.MIGRATION,
    m0021_record_people.MIGRATION,
    m0023_member_purge.MIGRATION,
)

__all__ = [
    "MIGRATIONS",
    "FullTextSplit",
    "KeyGuard",
    "Migration",
    "TableRebuild",
    "apply_migrations",
    "canonical_statement",
    "check_migration_list",
    "migration_checksum",
]
