/** Answers of the server as the unit tests use them (shapes of rutter_lsp/features/runs). */

import type { MemoryRecord, RunEntry, RunInspection, Snapshot } from "../src/protocol";

function snapshot(fingerprint: string, sources: [string, string][]): Snapshot {
  return {
    protocol_version: "project_instruction_snapshot.v1",
    workspace_id: "shop",
    target_path: ".",
    fingerprint,
    loaded_at: "2026-12-02T10:00:00Z",
    sources: sources.map(([path, content], index) => ({
      ordinal: index + 1, path, kind: "agents", scope: ".", depth: 0, precedence: index * 100,
      why_effective: "w", redacted: false, redactions: [], content_sha256: "0", content,
    })),
    ignored: [],
    conflicts: [],
  };
}

export function inspection(): RunInspection {
  return {
    run_id: "run_01",
    revision: 2,
    pinned: snapshot("a".repeat(64), [["AGENTS.md", "one\ntwo\nthree\n"], ["old/AGENTS.md", "gone\n"]]),
    live: snapshot("b".repeat(64), [["AGENTS.md", "one\n2\nthree\nfour\n"], ["new/AGENTS.md", "fresh\n"]]),
    stale: true,
    diff: {
      from_fingerprint: "a".repeat(64),
      to_fingerprint: "b".repeat(64),
      added: ["new/AGENTS.md"],
      removed: ["old/AGENTS.md"],
      changed: ["AGENTS.md"],
      order_changed: false,
      ignored_changed: true,
      requires_confirmation: true,
    },
  };
}

export function run(overrides: Partial<RunEntry> = {}): RunEntry {
  return {
    run_id: "run_01",
    workspace_id: "shop",
    goal: "fix the parser",
    target_path: "services/api",
    status: "running",
    revision: 1,
    fingerprint: "a".repeat(64),
    stale: false,
    live_fingerprint: "a".repeat(64),
    ...overrides,
  };
}


export function memory(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id: "mem_01",
    protocol_version: "context_memory.v1",
    scope: "project",
    scope_id: "shop",
    title: "Deploy checklist",
    content: "1. tag\n2. push\n",
    content_sha256: "0".repeat(64),
    status: "active",
    source_kind: "operator_explicit",
    references: ["docs/deploy.md"],
    retention_until: null,
    expired: false,
    redacted: false,
    created_by: "cli",
    created_by_person: null,
    updated_by: "lsp",
    updated_by_person: "alice",
    version: 3,
    created_at: "2026-12-01T10:00:00Z",
    updated_at: "2026-12-02T10:00:00Z",
    ...overrides,
  };
}
