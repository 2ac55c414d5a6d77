/**
 * The rutter language server's custom messages and the JSON shapes the extension reads.
 *
 * Only the fields the extension uses are typed; the server sends more. The protocol tests
 * (test/protocol) drive the real server and feed its answers through these types into the
 * view models, so a rename on either side fails there.
 */

export const Methods = {
  effectiveInstructions: "rutter/effectiveInstructions",
  instructionsChanged: "rutter/instructionsChanged",
  runs: "rutter/runs",
  runsChanged: "rutter/runsChanged",
  runInstructions: "rutter/runInstructions",
  confirmRefresh: "rutter/confirmRefresh",
  memoryList: "rutter/memory/list",
  memoryGet: "rutter/memory/get",
  memoryCreate: "rutter/memory/create",
  memoryEdit: "rutter/memory/edit",
  memorySetStatus: "rutter/memory/setStatus",
  memoryDelete: "rutter/memory/delete",
  memoryExport: "rutter/memory/export",
} as const;

/** `{"error": {...}}`: the typed reason a request could not answer (contract section 7). */
export interface ErrorInfo {
  code: string;
  message: string;
  path?: string;
  details?: Record<string, unknown>;
}

export interface ErrorAnswer {
  error: ErrorInfo;
}

export interface RedactionCount {
  kind: string;
  count: number;
}

export interface Source {
  ordinal: number;
  path: string;
  kind: string;
  scope: string;
  depth: number;
  precedence: number;
  why_effective: string;
  redacted: boolean;
  redactions: RedactionCount[];
  content_sha256: string;
  /** The redacted text (present in snapshots; the review shows its changes). */
  content?: string;
}

export interface IgnoredEntry {
  path: string;
  /** `superseded`, `blank_override` or `ignore_file` (contract section 5.5). */
  reason: string;
  superseded_by?: string;
  line?: number;
  pattern?: string;
}

export interface Conflict {
  role: string;
  lower_precedence_path: string;
  higher_precedence_path: string;
  resolution: string;
}

/** `project_instruction_snapshot.v1` (contract section 5.5). */
export interface Snapshot {
  protocol_version: string;
  workspace_id: string;
  target_path: string;
  fingerprint: string;
  loaded_at: string;
  sources: Source[];
  ignored: IgnoredEntry[];
  conflicts: Conflict[];
}

/** The answer of `rutter/effectiveInstructions`. */
export type InstructionsAnswer = Snapshot | ErrorAnswer;

/** `rutter/instructionsChanged` (server → client). */
export interface InstructionsChanged {
  workspace_id: string;
  paths: string[];
}

/** An active run in `rutter/runs` (a `RunRecord` plus its drift; rutter_lsp/runs.py). */
export interface RunEntry {
  run_id: string;
  workspace_id: string;
  goal: string;
  target_path: string;
  status: string;
  /** The latest pinned revision; null for a run with none yet (imported or legacy). */
  revision: number | null;
  fingerprint: string | null;
  stale: boolean;
  /** Live discovery fails closed now: the run stays on its pinned snapshot. */
  live_error?: ErrorInfo;
  live_fingerprint?: string | null;
  /** The run could not be inspected (e.g. a tampered revision). */
  error?: ErrorInfo;
}

export interface RunsAnswer {
  runs: RunEntry[];
}

/** `rutter/runsChanged` (server → client): the active runs of these workspaces were created,
 * refreshed or ended (also by another process), or went stale or back (rutter_lsp/runs.py). */
export interface RunsChanged {
  workspace_ids: string[];
}

/** Pinned → live (contract section 6). */
export interface SnapshotDiff {
  from_fingerprint: string | null;
  to_fingerprint: string | null;
  added: string[];
  removed: string[];
  changed: string[];
  order_changed: boolean;
  ignored_changed: boolean;
  requires_confirmation: boolean;
}

/** The answer of `rutter/runInstructions`: a run's pinned snapshot against disk now. */
export interface RunInspection {
  run_id: string;
  revision: number | null;
  pinned: Snapshot | null;
  live: Snapshot | ErrorAnswer;
  stale: boolean;
  diff: SnapshotDiff;
}

/** The answer of `rutter/confirmRefresh`: the inspection after the call. */
export interface ConfirmResult extends RunInspection {
  refreshed: boolean;
}

export function isErrorAnswer(value: unknown): value is ErrorAnswer {
  if (typeof value !== "object" || value === null || !("error" in value)) {
    return false;
  }
  const error = value.error;
  return typeof error === "object" && error !== null && "code" in error;
}

/**
 * The typed error behind a failed request: the server puts it in the JSON-RPC error's `data`
 * (rutter_lsp/errors.py); anything else (server gone, transport error) becomes
 * `request_failed` with the error's message.
 */
export function typedError(error: unknown): ErrorInfo {
  if (typeof error === "object" && error !== null) {
    const data = (error as { data?: unknown }).data;
    if (typeof data === "object" && data !== null) {
      const info = data as Partial<ErrorInfo>;
      if (typeof info.code === "string" && typeof info.message === "string") {
        return { ...info, code: info.code, message: info.message };
      }
    }
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string") {
      return { code: "request_failed", message };
    }
  }
  return { code: "request_failed", message: String(error) };
}

/** `context_memory.v1` (issue 5; rutter_core/memory.py). */
export interface MemoryRecord {
  id: string;
  protocol_version: string;
  /** `user` or `project`. */
  scope: string;
  scope_id: string;
  title: string;
  content: string;
  content_sha256: string;
  /** `active` or `disabled`. */
  status: string;
  source_kind: string;
  references: string[];
  retention_until: string | null;
  expired: boolean;
  redacted: boolean;
  created_by: string;
  updated_by: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface MemoryList {
  items: MemoryRecord[];
  has_more: boolean;
}

/** The answer of `rutter/memory/delete`: deleted, or kept because the person cancelled. */
export interface DeletedMemory {
  id: string;
  version: number;
  deleted: boolean;
  recoverable?: boolean;
  cancelled?: boolean;
}

/** `context_memory_export.v1`. */
export interface MemoryExport {
  protocol_version: string;
  exported_at: string;
  scope: string;
  scope_id: string;
  items: MemoryRecord[];
  capability_grant: false;
}
