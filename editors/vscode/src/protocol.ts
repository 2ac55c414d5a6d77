/**
 * The rutter language server's custom messages and the JSON shapes the extension reads.
 *
 * Most shapes are the generated ones (`protocol.generated.ts`, written by tools/reference.py from
 * the server's own models; docs/reference/schemas/lsp.json): a field renamed or retyped on the
 * server fails the type check here. The few interfaces still written out below type only the
 * fields the extension reads (the server sends more), so that the view tests can build them
 * from small fixtures; the protocol tests (test/protocol) drive the real server and feed its
 * answers through them into the view models, so a rename on either side fails there.
 */

import type * as generated from "./protocol.generated";

export const Methods = {
  effectiveInstructions: "rutter/effectiveInstructions",
  instructionsChanged: "rutter/instructionsChanged",
  runs: "rutter/runs",
  runsChanged: "rutter/runsChanged",
  runInstructions: "rutter/runInstructions",
  confirmRefresh: "rutter/confirmRefresh",
  createRun: "rutter/createRun",
  setRunStatus: "rutter/setRunStatus",
  memoryList: "rutter/memory/list",
  memoryGet: "rutter/memory/get",
  memoryCreate: "rutter/memory/create",
  memoryEdit: "rutter/memory/edit",
  memorySetStatus: "rutter/memory/setStatus",
  memoryDelete: "rutter/memory/delete",
  memoryExport: "rutter/memory/export",
  memoryCandidates: "rutter/memory/candidates",
  memoryCandidate: "rutter/memory/candidate",
  memoryConfirmCandidate: "rutter/memory/confirmCandidate",
  memoryIgnoreCandidate: "rutter/memory/ignoreCandidate",
  sessionCheckpoint: "rutter/session/checkpoint",
  sessionNode: "rutter/session/node",
  sessionFork: "rutter/session/fork",
  sessionResume: "rutter/session/resume",
  sessionTree: "rutter/session/tree",
  sessionCompare: "rutter/session/compare",
  sessionRecent: "rutter/session/recent",
  sessionsChanged: "rutter/sessionsChanged",
  pinList: "rutter/pin/list",
  pinAdd: "rutter/pin/add",
  pinEdit: "rutter/pin/edit",
  pinRemove: "rutter/pin/remove",
  pinProposals: "rutter/pin/proposals",
  pinAnswer: "rutter/pin/answer",
  pinProposalsChanged: "rutter/pinProposalsChanged",
  historySearch: "rutter/historySearch",
  historyRead: "rutter/historyRead",
  contextAssemble: "rutter/contextAssemble",
  sessionCompact: "rutter/session/compact",
  sessionCompactionResolve: "rutter/session/compactionResolve",
  contextAudit: "rutter/contextAudit",
} as const satisfies Record<string, generated.RequestMethod | generated.NotificationMethod>;

/** The params and result of each `rutter/*` request, as the server declares them. */
export type Requests = generated.Requests;

/**
 * The error document (docs/reference/errors.md): the typed reason something could not be done. A
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

export type RedactionCount = generated.RedactionCount;

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
  /** A link inside the workspace: the file it ends at, whose content this is (docs/reference/discovery.md). */
  link_target?: string;
  /** The link is a git `core.symlinks=false` stub file. */
  link_stub?: boolean;
}

export interface IgnoredEntry {
  path: string;
  /** `superseded`, `blank_override`, `ignore_file` or `alias` (docs/reference/discovery.md). */
  reason: string;
  superseded_by?: string;
  line?: number;
  pattern?: string;
  /** `alias`: the source this link ends at; it is not delivered twice. */
  alias_of?: string;
  link_stub?: boolean;
}

export type Conflict = generated.Conflict;

/** `project_instruction_snapshot.v1` (docs/reference/discovery.md). */
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
export type InstructionsChanged = generated.InstructionsChanged;

/** An active run in `rutter/runs` (a `RunRecord` plus its drift; rutter_lsp/features/runs/requests.py). */
export interface RunEntry {
  run_id: string;
  workspace_id: string;
  /** The run's thread: its pins are the thread's (sent by the server; optional for older ones). */
  thread_id?: string;
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
  /** Whose registration `workspace_id` (the one the run was made through) is: the list holds
   * the runs of the served folders' projects, made on any machine. */
  machine?: "this_machine" | "other_machine" | "unclaimed" | null;
  /** The served registration whose files the drift was read from (its own, or the first
   * served registration of its project for a run made through another). */
  drift_workspace_id?: string | null;
}

/** The answer of `rutter/createRun` (what `rutter run create --json` prints). */
export type CreatedRun = generated.CreatedRun;

/** The answer of `rutter/setRunStatus`: the run after the call (`rutter run status --json`). */
export type RunRecord = generated.RunRecord;

export interface RunsAnswer {
  runs: RunEntry[];
}

/** `rutter/runsChanged` (server → client): the active runs of these workspaces were created,
 * refreshed or ended (also by another process), or went stale or back (rutter_lsp/features/runs/monitor.py). */
export type RunsChanged = generated.WorkspacesChanged;

/** Pinned → live (docs/reference/runs.md). */
export type SnapshotDiff = generated.SnapshotDiff;

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
 * (server/rutter_lsp/errors.py); undefined when it carries none (server gone, transport error).
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
  /** Who made it (null: before people were recorded). */
  created_by_person: string | null;
  updated_by: string;
  /** Who changed it last (null: before people were recorded). */
  updated_by_person: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface MemoryList {
  items: MemoryRecord[];
  has_more: boolean;
}

/** An experience candidate (`context_memory_candidate.v1`, docs/reference/memory.md). */
export type MemoryCandidate = generated.MemoryCandidate;
/** `rutter/memory/candidates`: a workspace's pending candidates. */
export type CandidateList = generated.CandidateList;
/** `rutter/memory/confirmCandidate`: the resolved candidate and the memory it created. */
export type ConfirmedCandidate = generated.ConfirmedCandidate;

/** The answer of `rutter/memory/delete`: deleted, or kept because the person cancelled. */
export type DeletedMemory = generated.DeletedMemory;

/** `context_memory_export.v1`. */
export interface MemoryExport {
  protocol_version: string;
  exported_at: string;
  scope: string;
  scope_id: string;
  items: MemoryRecord[];
  capability_grant: false;
}

// -- session continuity (docs/reference/continuity.md; rutter_lsp/features/{session,branches,sessions}) --

/** A memory reference of a node and what became of it (`session_tree.v1`). */
export type MemoryMarker = generated.MemoryMarker;

export type InstructionsMarker = generated.InstructionsMarker;

export interface GitIdentity {
  branch: string | null;
  head: string;
}

export type GitMarker = generated.GitMarker;

/** A node's drift markers: what it recorded against what is true now. */
export type Drift = generated.Drift;

/** A node as `rutter/session/tree` and `rutter/session/recent` list it. */
export type TreeNode = generated.TreeNode;

/** What a projected compaction node's summary stands for (`TreeNode.compaction`). */
export type CompactionFacts = generated.CompactionFacts;

/** The answer of `rutter/session/compact` and `/compactionResolve`: the operation as stored. */
export type Compaction = generated.Compaction;

/** `session_tree.v1`: nodes depth first from the root, a parent before its children. */
export type SessionTree = generated.SessionTree;

/** The answer of `rutter/session/recent`: the workspace's newest stored nodes, newest first. */
export type RecentNodes = generated.RecentNodes;

export interface SnapshotMessage {
  message_id: string;
  seq: number;
  role: string;
  source: string;
  text: string;
  text_truncated: boolean;
}

/** `continuity_snapshot.v1` (the fields the extension shows). */
export interface ContinuitySnapshot {
  protocol_version: string;
  fingerprint: string;
  created_at: string;
  workspace_id: string;
  mission_id: string;
  run_id: string;
  mode: string;
  title: string;
  summary: string | null;
  compaction_summary: { note_id: string; version: number; text: string } | null;
  messages: { total: number; items: SnapshotMessage[] };
  memory: { total_active: number; truncated: boolean; references: { memory_id: string; version: number; content_sha256: string }[] };
  instructions: { run_id: string; revision: number; fingerprint: string; target_path: string };
  project_configuration: { fingerprint: string | null; matches_pinned: boolean; reason: string | null };
  git: GitIdentity | null;
  git_reason: string | null;
  inherits: string[];
}

/** `session_continuity_node.v1`: the answer of `rutter/session/node` and `/checkpoint`. */
export interface ContinuityNode {
  protocol_version: string;
  node_id: string;
  parent_node_id: string | null;
  kind: string;
  run_id: string;
  session_id: string;
  thread_id: string;
  title: string | null;
  created_by: string;
  /** Who made it (null: before people were recorded). */
  created_by_person: string | null;
  created_at: string;
  snapshot: ContinuitySnapshot | null;
}

/** The answer of an accepted `rutter/session/fork` or `/resume`. */
export type BranchedRun = generated.BranchedRun;

/** The answer of a fork or resume the person declined: nothing was written. */
export type CancelledBranch = generated.CancelledBranch;

export function isCancelled(value: BranchedRun | CancelledBranch): value is CancelledBranch {
  return "cancelled" in value && value.cancelled === true;
}

export type ComparedNode = generated.ComparedNode;

/** The answer of `rutter/session/compare`: changes from A to B. */
export type NodeComparison = generated.NodeComparison;

/** `rutter/sessionsChanged` (server → client): continuity data of these workspaces changed,
 * written by any process (rutter_lsp/features/sessions/monitor.py). */
export type SessionsChanged = generated.WorkspacesChanged;

/** A thread's pin (`rutter context pin … --json`; docs/reference/pins.md). */
export interface Pin {
  pin_id: string;
  thread_id: string;
  text: string;
  redacted: boolean;
  proposal_id: string | null;
  version: number;
}

/** `rutter/pin/list`: a thread's pins (or a run's thread's). */
export type PinList = generated.PinList;

/** A pin an agent proposed (through `rutter mcp`), and its answer once answered. */
export interface Proposal {
  proposal_id: string;
  thread_id: string;
  workspace_id: string;
  run_id: string | null;
  text: string;
  proposed_by: string;
  /** The person the proposing agent's surface acted for (null: before people were recorded). */
  proposed_by_person: string | null;
  status: "pending" | "answered";
  choice: "pin" | "discuss" | "custom" | null;
  pin_id: string | null;
  created_at: string;
}

export type ProposalList = generated.ProposalList;

/** `rutter/pin/answer`: the proposal as answered and the pin it created (null: none). */
export type AnsweredProposal = generated.AnsweredProposal;

/** `rutter/pinProposalsChanged` (server → client): the pending proposals of these workspaces changed. */
export type PinProposalsChanged = generated.WorkspacesChanged;

// -- history search and read (docs/reference/history.md; rutter_lsp/features/history) --

/** One hit of `rutter/historySearch`. */
export type HistoryHit = generated.HistoryHit;

export type HistoryHits = generated.HistoryHits;

/** One page of a source, `rutter/historyRead`. */
export type HistoryPage = generated.HistoryPage;

// -- agent profiles (docs/reference/profiles.md; `rutter/effectiveInstructions` with `profile`) --

/** Where an agent would cut a file: it keeps bytes 0 to `byte` - 1; `line` holds the first byte lost. */
export type ProfileTruncation = generated.ProfileTruncation;

export type ProfileSource = generated.ProfileSource;

/** What one agent would load for a file, in its order. */
export type ProfileView = generated.ProfileView;

/** The answer for `profile: "all"`. */
export type ProfileViews = generated.ProfileViews;

// -- context assembly and audit (docs/reference/assembly.md; rutter_lsp/features/assembly) --

export interface AssemblyEntry {
  /** `instruction`, `pin` or `memory`. */
  kind: string;
  id: string;
  version: number;
  /** `user` or `project` for a memory. */
  scope: string | null;
  sha256: string;
  tokens: number | null;
  decision: "included" | "omitted";
  /** `quota`, `required_context`, `instructions`, `disabled` or `expired` (omitted only). */
  reason: string | null;
  /** The delivered text (`rutter/contextAssemble` only; null when omitted). */
  text?: string | null;
}

export interface AssemblyBudget {
  background: number;
  memory_cap: number;
  memory: number;
  required: number;
  used: number;
}

export type ConfiguredScope = generated.ConfiguredScope;

export interface AssemblyConfigured {
  instructions: { revision: number; fingerprint: string; target_path: string; sources: number };
  pins: number;
  memory: Record<string, ConfiguredScope>;
}

export type FollowedReport = generated.FollowedReport;

/** `context_assembly.v1`: what `rutter/contextAssemble` answers and the audit keeps. */
export interface Assembly {
  protocol_version: string;
  assembly_id: string;
  run_id: string;
  thread_id: string;
  workspace_id: string;
  created_at: string;
  created_by: string;
  /** Who assembled it (null: before people were recorded). */
  created_by_person: string | null;
  estimator: string;
  budget: AssemblyBudget;
  configured: AssemblyConfigured;
  entries: AssemblyEntry[];
  fingerprint: string;
}

export interface AuditRecord extends Assembly {
  followed: FollowedReport | null;
}

/** The answer of `rutter/contextAudit`: a run's stored assemblies, newest first. */
export interface AuditList {
  run_id: string;
  assemblies: AuditRecord[];
  has_more: boolean;
}
