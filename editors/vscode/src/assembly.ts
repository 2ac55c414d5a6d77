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
 */

import type { Assembly, AssemblyEntry, AuditList, AuditRecord, RunEntry } from "./protocol";
import { Methods, typedError } from "./protocol";
import type { Disposable, Ports } from "./ports";
import { runIdOf } from "./runsView";

export const AssemblyCommands = {
  assemble: "rutter.showAssembledContext",
  audit: "rutter.showContextAudit",
} as const;

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
    `Assembly ${assembly.assembly_id}, ${assembly.created_at} by ${assembly.created_by}; stored in the run's audit.`,
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
    `Reported by ${report.reported_by} at ${report.reported_at}:`,
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
      `## ${record.assembly_id} — ${record.created_at} by ${record.created_by}`,
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

  async assemble(argument?: unknown): Promise<void> {
    const runId = runIdOf(argument) ?? (await this.pickRun());
    if (runId === undefined) {
      return;
    }
    const { editor, server } = this.ports;
    try {
      const assembly = await server.request<Assembly>(Methods.contextAssemble, { run_id: runId });
      await editor.showRendered(`context-${runId}.md`, assemblyText(assembly));
    } catch (error) {
      const info = typedError(error);
      editor.showMessage("error", `rutter: cannot assemble the context of run ${runId} (${info.code}): ${info.message}`);
    }
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
