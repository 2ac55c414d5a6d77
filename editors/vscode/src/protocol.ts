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

/**
 * The error document (contract section 7): the typed reason something could not be done. A
 * failed custom request carries it as the JSON-RPC error's `data` (every `rutter/*` request and
 * command, docs/editors.md); an answer that reports a failure of one of its parts holds it under
 * `error` (a run's live discovery: `live`, `live_error`).
 */
export interface ErrorInfo {
  code: string;
  message: string;
  path?: string;
  details?: Record<string, unknown>;
  /** What to do next, as data (`fix` names the remedy); the message stays the text to show. */
  hint?: { fix: string } & Record<string, unknown>;
}

/** `{"error": {...}}`: a part of an answer that failed, or a failed request as the views take it. */
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
  /** A link inside the workspace: the file it ends at, whose content this is (contract 5.6). */
  link_target?: string;
  /** The link is a git `core.symlinks=false` stub file. */
  link_stub?: boolean;
}

export interface IgnoredEntry {
  path: string;
  /** `superseded`, `blank_override`, `ignore_file` or `alias` (contract sections 5.5, 5.6). */
  reason: string;
  superseded_by?: string;
  line?: number;
  pattern?: string;
  /** `alias`: the source this link ends at; it is not delivered twice. */
  alias_of?: string;
  link_stub?: boolean;
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

/**
 * What the views show for a file: the snapshot `rutter/effectiveInstructions` answered with, or
 * the typed error it failed with (see `instructionsAnswer`).
 */
export type InstructionsAnswer = Snapshot | ErrorAnswer;

/** `rutter/instructionsChanged` (server → client). */
export interface InstructionsChanged {
  workspace_id: string;
  paths: string[];
}

/** An active run in `rutter/runs` (a `RunRecord` plus its drift; rutter_lsp/features/runs/requests.py). */
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
 * refreshed or ended (also by another process), or went stale or back (rutter_lsp/features/runs/monitor.py). */
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
 * The error document a failed request carries as the JSON-RPC error's `data`
 * (surfaces/rutter_lsp/errors.py); undefined when it carries none (server gone, transport error).
 */
export function errorDocument(error: unknown): ErrorInfo | undefined {
  if (typeof error !== "object" || error === null) {
    return undefined;
  }
  const data = (error as { data?: unknown }).data;
  if (typeof data !== "object" || data === null) {
    return undefined;
  }
  const info = data as Partial<ErrorInfo>;
  if (typeof info.code !== "string" || typeof info.message !== "string") {
    return undefined;
  }
  return { ...info, code: info.code, message: info.message };
}

/**
 * The typed error behind a failed request (`errorDocument`); a failure without one becomes
 * `request_failed` with the error's message.
 */
export function typedError(error: unknown): ErrorInfo {
  const document = errorDocument(error);
  if (document !== undefined) {
    return document;
  }
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string") {
      return { code: "request_failed", message };
    }
  }
  return { code: "request_failed", message: String(error) };
}

/**
 * The answer of a `rutter/effectiveInstructions` request as the views take it: the snapshot, or
 * `{ error }` with the typed error the request failed with (discovery fails closed, the file is
 * in no served folder). A failure without a typed error (the server is gone) is thrown again.
 */
export async function instructionsAnswer(pending: Promise<Snapshot>): Promise<InstructionsAnswer> {
  try {
    return await pending;
  } catch (error) {
    const document = errorDocument(error);
    if (document === undefined) {
      throw error;
    }
    return { error: document };
  }
}

/** `context_memory.v1` (issue 5; rutter_core/memory/model.py). */
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
