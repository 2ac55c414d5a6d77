"""Migration 20: each machine registers its own location of a project (issue 31, docs/team.md,
docs/reference/workspaces.md#machines). Released: never edit it.

- `workspaces.machine_id`: the machine whose location the registration is (32 hex characters:
  a keyed hash, never a raw system identifier; `rutter_core.workspaces.machine`).
- `workspaces.root` is unique per machine (`workspaces_one_root_per_machine` on
  `(machine_id, root)`), no longer in the whole store: two machines keeping a project at the
  same path (`/workspace`, `/home/dev/src/app`) each have their own registration. The table is
  rebuilt for that (a column's UNIQUE cannot be dropped in place everywhere), keeping every
  row; its index by project is made again as migration 16 made it.
- Existing rows keep a NULL `machine_id`: registered before machines were known. The migration
  cannot know which machine that was (it runs on whichever opens the store first, and reads no
  file). Such a row is taken, under the write lock, by the first machine that looks up a
  registration at its root (a command in that directory, `workspace register`, an editor
  folder) or moves it; until then it is listed `unclaimed` and no machine gets a registration
  of its own at that root. A store used by one machine (every SQLite store under RUTTER_HOME)
  thus keeps its registrations on that machine; a team's store that had one row for a path two
  machines share gives it to the first of them, and the other registers its own.
"""

from rutter_core.store.migrations.migration import Migration, TableRebuild

MIGRATION = Migration(
    20,
    "machines",
    (
        "CREATE INDEX workspaces_by_project ON workspaces (project_id)",
        "CREATE UNIQUE INDEX workspaces_one_root_per_machine ON workspaces (machine_id, root)",
    ),
    rebuilds=(
        TableRebuild(
            "workspaces",
            """
            workspace_id TEXT NOT NULL PRIMARY KEY
                CHECK (length(workspace_id) BETWEEN 1 AND 64
                       AND workspace_id = lower(workspace_id)
                       AND substr(workspace_id, 1, 1) NOT IN ('.', '_', '-')),
            root TEXT CHECK (root IS NULL OR length(root) > 0),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            project_id TEXT REFERENCES projects (project_id),
            machine_id TEXT CHECK (machine_id IS NULL
                OR (length(machine_id) = 32 AND machine_id = lower(machine_id)))
            """,
            ("workspace_id", "root", "created_at", "project_id"),
        ),
    ),
)
