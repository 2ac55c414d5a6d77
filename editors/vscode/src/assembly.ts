/**
 * Assembled context in VS Code (docs/reference/assembly.md), from a run of the Runs view (its context
 * menu) or the palette (a pick of the active runs):
 *
 * - "Show Assembled Context" (`rutter.showAssembledContext`): `rutter/contextAssemble` for the
 *   run (the default budget; the assembly is stored in the run's audit by the server), opened
 *   as a read-only markdown document: the budget, then every entry in authority order,
 *   included (ID, version, tokens, SHA-256) or omitted with its reason. The delivered texts are
 *   not repeated in it: the document says what was chosen and why.
 * - "Show Context Audit" (`rutter.showContextAudit`): `rutter/contextAudit`, the run's stored
 *   assemblies newest first, keeping the three facts apart (configured, injected, followed).
 *
 * When the required context (pinned instructions, pins, the latest summary) does not fit the
 * budget, the assembly fails `context_overflow` and delivers nothing. The error is shown with
 * its figures (each required source with its tokens, the total needed, the budget) and the
 * fixes as buttons: "Remove Pins…" (a pick of the required pins; each chosen one is removed with
 * `rutter/pin/remove`, then the context is assembled again with the same budget) and "Raise
 * Budget…" (an input box; the context is assembled again with the new budget).
 */

import type { Assembly, AssemblyEntry, AuditList, AuditRecord, ErrorInfo, Pin, PinList, RunEntry } from "./protocol";
import { Methods, typedError } from "./protocol";
import { who } from "./people";
import type { Disposable, Ports } from "./ports";
import { runIdOf } from "./runsView";

export const AssemblyCommands = {
  assemble: "rutter.showAssembledContext",
  audit: "rutter.showContextAudit",
} as const;

export const REMOVE_PINS = "Remove Pins…";
export const RAISE_BUDGET = "Raise Budget…";
/** The largest budget the server takes (`AssembleParams.budget`). */
export const MAX_BUDGET = 1_000_000;

/** A required source of a `context_overflow` error (`details.required`). */
export interface RequiredSource {
  kind: string;
  id: string;
  tokens: number;
}

/** The figures of a `context_overflow` error (`details`). */
export interface Overflow {
  budget: number;
  needed: number;
  required: RequiredSource[];
}

/** The figures of a `context_overflow` error, or undefined for any other error. */
export function overflowOf(error: ErrorInfo): Overflow | undefined {
  const details = error.details;
  if (error.code !== "context_overflow" || details === undefined) {
    return undefined;
  }
  const { budget, needed, required } = details as { budget?: unknown; needed?: unknown; required?: unknown };
  if (typeof budget !== "number" || typeof needed !== "number" || !Array.isArray(required)) {
    return undefined;
  }
  const sources = required.filter(
    (item): item is RequiredSource =>
      typeof item === "object" &&
      item !== null &&
      typeof (item as RequiredSource).kind === "string" &&
      typeof (item as RequiredSource).id === "string" &&
      typeof (item as RequiredSource).tokens === "number",
  );
  return { budget, needed, required: sources };
}

/** The overflow as one message: the figures, each required source, and the fixes. */
export function overflowText(runId: string, overflow: Overflow): string {
  const sources = overflow.required.map((source) => `${source.kind} ${source.id} (${source.tokens} tokens)`);
  const fixes = [
    ...(overflow.required.some((source) => source.kind === "pin") ? ["remove pins"] : []),
    "raise the budget",
    "choose a model with a larger window",
  ];
  return (
    `rutter: the required context of run ${runId} needs ${overflow.needed} tokens and the budget is ${overflow.budget}; ` +
    `nothing is delivered rather than leaving out an instruction or a pin. Required: ${sources.join(", ")}. ` +
    `Fix: ${fixes.join(", ")}.`
  );
}

/** The error of a budget typed in "Raise Budget…", or undefined when it is acceptable. */
export function budgetError(text: string): string | undefined {
  const value = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1 || value > MAX_BUDGET) {
    return `A whole number of tokens, 1-${MAX_BUDGET}`;
  }
  return undefined;
}

/** Why an omitted entry was left out, as a phrase (the reasons of docs/reference/assembly.md). */
export function reasonText(reason: string | null): string {
  switch (reason) {
    case "quota":
      return "does not fit the memory sub-budget";
    case "required_context":
      return "the budget is spent by pinned instructions and pins before memory";
    case "instructions":
      return "instruction source cut by the budget";
    case "disabled":
      return "disabled memory";
    case "expired":
      return "expired memory";
    case null:
      return "";
    default:
      return reason;
  }
}

function tokensText(tokens: number | null): string {
  return tokens === null ? "not read" : `${tokens} tokens`;
}

/** One entry as a line: `included memory mem_1 v2 (user) · 40 tokens · sha256 abcdef012345`. */
export function entryLine(entry: AssemblyEntry): string {
  const scope = entry.scope === null ? "" : ` (${entry.scope})`;
  const head = `${entry.kind} \`${entry.id}\` v${entry.version}${scope} · ${tokensText(entry.tokens)} · sha256 ${entry.sha256.slice(0, 12)}`;
  return entry.decision === "included" ? `- included: ${head}` : `- omitted: ${head} — ${entry.reason ?? "?"}: ${reasonText(entry.reason)}`;
}

function entriesLines(entries: AssemblyEntry[]): string[] {
  const included = entries.filter((entry) => entry.decision === "included");
  const omitted = entries.filter((entry) => entry.decision === "omitted");
  return [
    `### Included (${included.length})`,
    "",
    ...(included.length === 0 ? ["None."] : included.map(entryLine)),
    "",
    `### Omitted (${omitted.length})`,
    "",
    ...(omitted.length === 0 ? ["None."] : omitted.map(entryLine)),
    "",
  ];
}

function budgetLines(assembly: Assembly): string[] {
  const { budget } = assembly;
  return [
    `- Budget: ${budget.used} of ${budget.background} tokens used (required context ${budget.required}; memory sub-budget ${budget.memory}, capped at ${budget.memory_cap})`,
    `- Estimator: ${assembly.estimator}`,
  ];
}

function configuredLines(assembly: Assembly): string[] {
  const { configured } = assembly;
  const lines = [
    `- Instructions: revision ${configured.instructions.revision} of ${configured.instructions.target_path}, ${configured.instructions.sources} sources (fingerprint ${configured.instructions.fingerprint.slice(0, 12)})`,
    `- Pins: ${configured.pins}`,
  ];
  for (const [scope, counts] of Object.entries(configured.memory)) {
    lines.push(
      `- ${scope} memories: ${counts.active} active (${counts.considered} considered), ${counts.inactive} disabled or expired`,
    );
  }
  return lines;
}

/** The document of one assembly. */
export function assemblyText(assembly: Assembly): string {
  return [
    `# Assembled context of run ${assembly.run_id}`,
    "",
    `Assembly ${assembly.assembly_id}, ${assembly.created_at} by ${who(assembly.created_by, assembly.created_by_person)}; stored in the run's audit.`,
    "",
    ...budgetLines(assembly),
    "",
    "## Configured",
    "",
    ...configuredLines(assembly),
    "",
    "## Injected, in authority order",
    "",
    ...entriesLines(assembly.entries),
    `Fingerprint: ${assembly.fingerprint}`,
    "",
  ].join("\n");
}

function followedLines(record: AuditRecord): string[] {
  const report = record.followed;
  if (report === null) {
    return ["Not reported: only an agent's later replies and tool receipts can say what was followed."];
  }
  return [
    `Reported by ${who(report.reported_by, report.reported_by_person)} at ${report.reported_at}:`,
    `- followed: ${report.followed.length === 0 ? "none" : report.followed.join(", ")}`,
    `- ignored: ${report.ignored.length === 0 ? "none" : report.ignored.join(", ")}`,
  ];
}

/** The document of a run's audit: each stored assembly with its three facts. */
export function auditText(audit: AuditList): string {
  const lines = [`# Context audit of run ${audit.run_id}`, ""];
  if (audit.assemblies.length === 0) {
    lines.push("No assembly stored for this run yet (Show Assembled Context makes one).", "");
  }
  for (const record of audit.assemblies) {
    lines.push(
      `## ${record.assembly_id} — ${record.created_at} by ${who(record.created_by, record.created_by_person)}`,
      "",
      ...budgetLines(record),
      "",
      "### Configured",
      "",
      ...configuredLines(record),
      "",
      ...entriesLines(record.entries).map((line) => line.replace(/^### /, "#### ")),
      "### Followed",
      "",
      ...followedLines(record),
      "",
    );
  }
  if (audit.has_more) {
    lines.push("Older assemblies are not shown (`rutter context audit RUN --limit N` lists more).", "");
  }
  return lines.join("\n");
}

export class AssemblyController implements Disposable {
  private readonly disposables: Disposable[] = [];

  constructor(
    private readonly ports: Ports,
    /** The active runs, asked again. */
    private readonly runs: () => Promise<readonly RunEntry[]>,
  ) {
    this.disposables.push(
      ports.editor.registerCommand(AssemblyCommands.assemble, (argument) => this.assemble(argument)),
      ports.editor.registerCommand(AssemblyCommands.audit, (argument) => this.audit(argument)),
    );
  }

  async assemble(argument?: unknown): Promise<Assembly | undefined> {
    const runId = runIdOf(argument) ?? (await this.pickRun());
    if (runId === undefined) {
      return undefined;
    }
    return this.assembleRun(runId, undefined);
  }

  /** Assemble the run's context (`budget` undefined: the server's default) and show it; an
   * overflow offers its fixes, each of which assembles again. */
  private async assembleRun(runId: string, budget: number | undefined): Promise<Assembly | undefined> {
    const { editor, server } = this.ports;
    try {
      const params = budget === undefined ? { run_id: runId } : { run_id: runId, budget };
      const assembly = await server.request<Assembly>(Methods.contextAssemble, params);
      await editor.showRendered(`context-${runId}.md`, assemblyText(assembly));
      return assembly;
    } catch (error) {
      const info = typedError(error);
      const overflow = overflowOf(info);
      if (overflow === undefined) {
        editor.showMessage("error", `rutter: cannot assemble the context of run ${runId} (${info.code}): ${info.message}`);
        return undefined;
      }
      return this.overflowed(runId, overflow);
    }
  }

  private async overflowed(runId: string, overflow: Overflow): Promise<Assembly | undefined> {
    const { editor } = this.ports;
    const pins = overflow.required.filter((source) => source.kind === "pin");
    const fixes = [...(pins.length > 0 ? [REMOVE_PINS] : []), RAISE_BUDGET];
    const chosen = await editor.notify("error", overflowText(runId, overflow), fixes);
    if (chosen === REMOVE_PINS) {
      return (await this.removePins(runId, pins)) ? this.assembleRun(runId, overflow.budget) : undefined;
    }
    if (chosen === RAISE_BUDGET) {
      const budget = await editor.input({
        title: "Raise Budget",
        prompt: `The background budget of run ${runId} in tokens: the required context needs ${overflow.needed}, the budget was ${overflow.budget}`,
        value: String(Math.min(MAX_BUDGET, Math.max(overflow.needed, overflow.budget + 1))),
        validate: budgetError,
      });
      return budget === undefined ? undefined : this.assembleRun(runId, Number(budget.trim()));
    }
    return undefined;
  }

  /** Pick among the required pins and remove the chosen ones; true when any was removed. */
  private async removePins(runId: string, required: RequiredSource[]): Promise<boolean> {
    const { editor, server } = this.ports;
    let listed: PinList;
    try {
      listed = await server.request<PinList>(Methods.pinList, { run_id: runId });
    } catch (error) {
      editor.showMessage("error", `rutter: cannot list the pins of run ${runId}: ${typedError(error).message}`);
      return false;
    }
    const tokens = new Map(required.map((source) => [source.id, source.tokens]));
    const pins = listed.pins.filter((pin) => tokens.has(pin.pin_id));
    const chosen = await editor.pickMany<Pin>(
      pins.map((pin) => ({
        label: pin.text.split("\n")[0] ?? pin.pin_id,
        description: `${pin.pin_id} · ${tokens.get(pin.pin_id) ?? 0} tokens`,
        value: pin,
      })),
      "Remove which pins from the thread?",
    );
    if (chosen === undefined || chosen.length === 0) {
      return false;
    }
    const removed: string[] = [];
    for (const pin of chosen) {
      try {
        await server.request(Methods.pinRemove, { pin_id: pin.pin_id, version: pin.version });
        removed.push(pin.pin_id);
      } catch (error) {
        editor.showMessage("error", `rutter: ${pin.pin_id} was not removed: ${typedError(error).message}`);
      }
    }
    if (removed.length > 0) {
      editor.showMessage("info", `rutter: removed ${removed.join(", ")}; assembling the context of run ${runId} again`);
    }
    return removed.length > 0;
  }

  async audit(argument?: unknown): Promise<void> {
    const runId = runIdOf(argument) ?? (await this.pickRun());
    if (runId === undefined) {
      return;
    }
    const { editor, server } = this.ports;
    try {
      const audit = await server.request<AuditList>(Methods.contextAudit, { run_id: runId });
      await editor.showRendered(`audit-${runId}.md`, auditText(audit));
    } catch (error) {
      const info = typedError(error);
      editor.showMessage("error", `rutter: cannot list the context audit of run ${runId} (${info.code}): ${info.message}`);
    }
  }

  private async pickRun(): Promise<string | undefined> {
    const runs = await this.runs();
    if (runs.length === 0) {
      this.ports.editor.showMessage("info", "rutter: no active run in the served workspaces");
      return undefined;
    }
    return this.ports.editor.pick(
      runs.map((run) => ({ label: run.goal.split("\n")[0] ?? run.run_id, description: `${run.run_id} · ${run.target_path}`, value: run.run_id })),
      "Which run?",
    );
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
