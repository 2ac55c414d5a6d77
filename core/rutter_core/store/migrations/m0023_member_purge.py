"""Migration 23: a member's deletion purges the store too (docs/team.md). Numbered 23 so that it
cannot collide with the migrations of work done beside it (20 to 22); it depends on none of
them. Released: never edit it.

Purging after a deletion rewrites the store's tables into new files, which needs their owner,
the administrator's role; a member of the group owns nothing. Where the engine keeps people
apart, this migration makes the function a member's purge calls to have one of rutter's tables
rewritten as its owner (`Dialect.purge_function`), executable by nobody until `rutter store
init` grants it to the members' group. On an engine whose store is one person's it makes
nothing: that person owns every table.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(23, "member_purge", (), purge_function=True)
