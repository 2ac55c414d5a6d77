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
