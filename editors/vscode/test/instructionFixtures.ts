/** A snapshot of the example monorepo as the Instructions view unit tests use it. */

import type { Snapshot } from "../src/protocol";

export function snapshot(): Snapshot {
  return {
    protocol_version: "project_instruction_snapshot.v1",
    workspace_id: "monorepo",
    target_path: "services/api/input.go",
    fingerprint: "9ac7a4ccb96c61615de68b7d9ed878991e6a5e955ec0af8e2472cc57450c1022",
    loaded_at: "2026-12-02T10:00:00Z",
    sources: [
      {
        ordinal: 1, path: "AGENTS.md", kind: "agents", scope: ".", depth: 0, precedence: 0,
        why_effective: "workspace-root AGENTS.md; inherited by services/api/input.go (depth 0)",
        redacted: false, redactions: [], content_sha256: "a".repeat(64),
      },
      {
        ordinal: 2, path: "CLAUDE.md", kind: "claude", scope: ".", depth: 0, precedence: 1,
        why_effective: "workspace-root CLAUDE.md", redacted: true,
        redactions: [{ kind: "secret_assignment", count: 1 }, { kind: "github_token", count: 2 }],
        content_sha256: "b".repeat(64),
      },
      {
        ordinal: 3, path: "services/api/AGENTS.override.md", kind: "agents_override", scope: "services/api",
        depth: 2, precedence: 200, why_effective: "services/api/AGENTS.override.md; replaces services/api/AGENTS.md",
        redacted: false, redactions: [], content_sha256: "c".repeat(64),
      },
    ],
    ignored: [
      { path: "services/api/AGENTS.md", reason: "superseded", superseded_by: "services/api/AGENTS.override.md" },
      { path: ".prayu/rules/drafts/wip.md", reason: "ignore_file", line: 2, pattern: ".prayu/rules/drafts/" },
      { path: "tools/AGENTS.override.md", reason: "blank_override" },
    ],
    conflicts: [
      {
        role: "agents", lower_precedence_path: "AGENTS.md", higher_precedence_path: "services/api/AGENTS.override.md",
        resolution: "both apply; services/api/AGENTS.override.md is nearer to the target and wins where they conflict",
      },
    ],
  };
}
