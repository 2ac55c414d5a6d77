"""Migration 16: projects, and the project of each workspace registration (issue 31,
docs/reference/workspaces.md#projects). Released: never edit it.

- `projects`: one row per project identity (`project_id`: a normalised `origin` remote such as
  `github.com/acme/widget`, a name given with `--project`, or `local:<workspace ID>`), with
  where it came from (`source`) and when it was first registered. No credential is ever in
  it: the code normalises them away and refuses a name that still looks like one.
- `workspaces.project_id`: the project a registration is a location of. Several registrations
  (two paths, two machines on one store, two clones) may name one project; the records made
  through any of them (runs, sessions, threads, pins, project memories, candidates,
  checkpoints) are the project's.
- `workspaces.root` may be NULL: a registration removed while its project has other
  registrations keeps its row (without a location) when records were made through it, so
  they stay the project's (their rows name it, and pinned snapshots name it too). The table
  is rebuilt for that (a NOT NULL cannot be dropped in place everywhere); roots stay unique.
- Backfill, deterministic and without reading any file or the network: every existing
  workspace becomes its own local project, `local:<workspace ID>`, so nothing merges by
  accident. A person joins registrations afterwards, explicitly (`workspace project set`).
"""

from rutter_core.store.migrations.migration import Migration, TableRebuild

MIGRATION = Migration(
    16,
    "projects",
    rebuilds=(
        TableRebuild(
            "workspaces",
            """
            workspace_id TEXT NOT NULL PRIMARY KEY
                CHECK (length(workspace_id) BETWEEN 1 AND 64
                       AND workspace_id = lower(workspace_id)
                       AND substr(workspace_id, 1, 1) NOT IN ('.', '_', '-')),
            root TEXT UNIQUE CHECK (root IS NULL OR length(root) > 0),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
            """,
            ("workspace_id", "root", "created_at"),
        ),
    ),
    statements=(
        """
        CREATE TABLE projects (
            project_id TEXT NOT NULL PRIMARY KEY
                CHECK (length(project_id) BETWEEN 1 AND 200),
            source TEXT NOT NULL CHECK (source IN ('remote', 'named', 'local')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            CHECK ((source = 'local') = (substr(project_id, 1, 6) = 'local:'))
        )
        """,
        """
        INSERT INTO projects (project_id, source, created_at)
            SELECT 'local:' || workspace_id, 'local', created_at FROM workspaces
        """,
        "ALTER TABLE workspaces ADD COLUMN project_id TEXT REFERENCES projects (project_id)",
        "UPDATE workspaces SET project_id = 'local:' || workspace_id",
        "CREATE INDEX workspaces_by_project ON workspaces (project_id)",
    ),
)
