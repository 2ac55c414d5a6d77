"""Migration 13: what kind of harness text an imported message is (issue 32, contract section
16). Released: never edit it.

An agent's transcript holds text its harness inserted (interruption markers, command wrappers
and their output, notifications, compaction prompts and summaries, instructions): such a
message is stored with role `system` and names its kind in `injected`; NULL is what a
participant said or did (every message stored before this migration). Messages stay
append-only: the column is added, never filled in for older rows.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(
    13,
    "message_injected",
    (
        """
        ALTER TABLE messages ADD COLUMN injected TEXT
            CHECK (injected IS NULL OR injected IN (
                'interruption', 'command', 'command_output', 'notification', 'reminder',
                'compaction_prompt', 'compaction_summary', 'instructions',
                'environment_context', 'skill', 'meta', 'event', 'session_title'))
        """,
    ),
)
