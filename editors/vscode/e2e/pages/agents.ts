/**
 * The per-agent switch of the Instructions view and the compare-agents document, as a person
 * uses them: the ONE place that knows how an agent's view reads (header `Agent: N sources in
 * its load order[; K cut]`, then `ordinal. path` in the agent's load order) and the document's
 * name. Expected rows come from `rutter context instructions --as AGENT --json`.
 */

import type { TreeRow } from "./workbench";

export const CHOOSE_COMMAND = "Rutter: Instructions for Agent…";
export const COMPARE_COMMAND = "Rutter: Compare Agents for This File";
export const DEFAULT_CHOICE = "rutter (default)";
export const LABELS: Record<string, string> = {
  codex: "Codex",
  claude: "Claude Code",
  gemini: "Gemini CLI",
  copilot: "Copilot",
  cursor: "Cursor",
};

/** The parts of `rutter context instructions --as AGENT --json` the view shows. */
export interface AgentView {
  agent: string;
  sources: { path: string; why: string; truncation: unknown }[];
}

/** The header row and the numbered source rows the view shows for `view`. */
export function expectedRows(view: AgentView): string[] {
  const label = LABELS[view.agent] ?? view.agent;
  const count = view.sources.length;
  const cut = view.sources.filter((source) => source.truncation !== null).length;
  const header = `${label}: ${count} ${count === 1 ? "source" : "sources"} in its load order${cut === 0 ? "" : `; ${cut} cut`}`;
  return [header, ...view.sources.map((source, index) => `${index + 1}. ${source.path}`)];
}

/** The labels of the view's top-level rows. */
export function topLabels(rows: TreeRow[]): string[] {
  return rows.filter((row) => row.level === 1).map((row) => row.label);
}

/** The name (tab label) of the compare-agents document of `target`. */
export function compareDocument(target: string): string {
  return `agents-${target.split("/").pop() ?? target}.md`;
}

/** The header row of the compare-agents table for `profiles`: File, one column per agent,
 * Loaded by. */
export function compareHeader(profiles: AgentView[]): string[] {
  return ["File", ...profiles.map((profile) => LABELS[profile.agent] ?? profile.agent), "Loaded by"];
}

/** The files of the compare-agents table, one row each: every file some agent loads, first
 * seen first (agent by agent, in load order). */
export function compareFiles(profiles: AgentView[]): string[] {
  const files: string[] = [];
  for (const profile of profiles) {
    for (const source of profile.sources) {
      if (!files.includes(source.path)) {
        files.push(source.path);
      }
    }
  }
  return files;
}
