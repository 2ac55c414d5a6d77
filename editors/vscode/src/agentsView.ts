/**
 * Agent profiles as the editor shows them (docs/reference/profiles.md): the Instructions view's rows
 * for one agent (its sources in its load order, each with where the agent cuts it and why it
 * loads it), and the side-by-side document of every agent for one file. Pure.
 *
 * The side-by-side is a markdown document (a read-only virtual document, no webview): its table
 * reads as plain text in the editor and renders in VS Code's markdown preview, it is searchable
 * and copyable, and it needs no script or content security policy.
 */

import type { ErrorInfo, ProfileSource, ProfileTruncation, ProfileView } from "./protocol";
import type { ViewNode } from "./ports";
import { openCommand } from "./instructionsView";
import { resolvePath } from "./paths";

/** `default`: rutter's own discovery (the snapshot runs pin); the others: agent profiles. */
export const AGENT_CHOICES = ["default", "codex", "claude", "gemini", "copilot", "cursor"] as const;
export type AgentChoice = (typeof AGENT_CHOICES)[number];
export type AgentName = Exclude<AgentChoice, "default">;
export const AGENT_NAMES: readonly AgentName[] = ["codex", "claude", "gemini", "copilot", "cursor"];

const LABELS: Record<AgentChoice, string> = {
  default: "rutter (default)",
  codex: "Codex",
  claude: "Claude Code",
  gemini: "Gemini CLI",
  copilot: "Copilot",
  cursor: "Cursor",
};

export function isAgentChoice(value: unknown): value is AgentChoice {
  return typeof value === "string" && (AGENT_CHOICES as readonly string[]).includes(value);
}

/** The agent as a person names it ("Claude Code"); an unknown name is shown as sent. */
export function agentLabel(agent: string): string {
  return isAgentChoice(agent) ? LABELS[agent] : agent;
}

/** A size in bytes as "312 B", "3.1 KiB" or "1.2 MiB". */
export function sizeText(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(1)} KiB`;
  }
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** "cut at line 412, 3.1 KiB lost". */
export function truncationText(cut: ProfileTruncation): string {
  return `cut at line ${cut.line}, ${sizeText(cut.lost_bytes)} lost`;
}

/** The header row of an agent's view. */
export function agentHeaderText(view: ProfileView): string {
  const count = view.sources.length;
  const cut = view.sources.filter((source) => source.truncation !== null).length;
  const base = `${agentLabel(view.agent)}: ${count} ${count === 1 ? "source" : "sources"} in its load order`;
  return cut === 0 ? base : `${base}; ${cut} cut`;
}

function sourceNode(source: ProfileSource, ordinal: number, root: string | undefined): ViewNode {
  const cut = source.truncation;
  const description = cut === null ? source.why : `${truncationText(cut)} · ${source.why}`;
  const tooltip = cut === null
    ? source.why
    : `${source.why}\nThe agent keeps bytes 0 to ${cut.byte - 1} and loses the rest: ${truncationText(cut)} (byte ${cut.byte}).`;
  const node: ViewNode = {
    id: `agent-source/${source.path}`,
    label: `${ordinal}. ${source.path}`,
    description,
    tooltip,
    icon: cut === null ? "file" : "warning",
    iconColor: cut === null ? undefined : "problemsWarningIcon.foreground",
    contextValue: "agentSource",
  };
  const command = openCommand(resolvePath(root, source.path));
  return command === undefined ? node : { ...node, command };
}

/** The Instructions view for one agent: a header, then its sources in its order. */
export function agentNodes(view: ProfileView, root: string | undefined): ViewNode[] {
  if (view.sources.length === 0) {
    return [
      {
        id: "agent-empty",
        label: `${agentLabel(view.agent)} loads no instruction file for this file`,
        icon: "info",
        contextValue: "agentHeader",
      },
    ];
  }
  return [
    {
      id: "agent-header",
      label: agentHeaderText(view),
      tooltip: `The files ${agentLabel(view.agent)} would load for this file, first loaded first, with where it cuts them. Choose "Instructions for Agent…" to switch; "rutter (default)" is the stack runs pin.`,
      icon: "list-ordered",
      contextValue: "agentHeader",
    },
    ...view.sources.map((source, index) => sourceNode(source, index + 1, root)),
  ];
}

/** The view when the agent's view could not be computed: the typed reason. */
export function agentErrorNode(agent: string, error: ErrorInfo): ViewNode {
  return {
    id: "agent-error",
    label: `No answer for ${agentLabel(agent)}`,
    description: error.code,
    tooltip: `${error.code}: ${error.message}`,
    icon: "error",
    iconColor: "problemsErrorIcon.foreground",
    contextValue: "error",
    children: [{ id: "agent-error/message", label: error.message, icon: "info" }],
    expanded: true,
  };
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/**
 * Every agent's view of one file side by side: a table with one column per agent (the
 * position in its load order, ✂ and where it cuts), one row per file any agent loads, marked
 * when only some agents load it; then each agent's list with why.
 */
export function compareText(target: string, views: ProfileView[]): string {
  const paths: string[] = [];
  for (const view of views) {
    for (const source of view.sources) {
      if (!paths.includes(source.path)) {
        paths.push(source.path);
      }
    }
  }
  const lines = [`# What each agent loads for ${target}`, ""];
  if (paths.length === 0) {
    lines.push("No agent loads an instruction file for this file.", "");
  } else {
    lines.push(
      "Each column is one agent: the file's position in its load order (1 first), ✂ where it cuts the file, — when it does not load it.",
      "",
      `| File | ${views.map((view) => agentLabel(view.agent)).join(" | ")} | Loaded by |`,
      `| --- | ${views.map(() => "---").join(" | ")} | --- |`,
    );
    for (const path of paths) {
      let loadedBy = 0;
      const cells = views.map((view) => {
        const index = view.sources.findIndex((source) => source.path === path);
        if (index < 0) {
          return "—";
        }
        loadedBy += 1;
        const cut = view.sources[index]?.truncation ?? null;
        return cut === null ? `${index + 1}` : `${index + 1} ✂ ${truncationText(cut)}`;
      });
      const marker = loadedBy === views.length ? "all" : `only ${loadedBy} of ${views.length}`;
      lines.push(`| ${cell(path)} | ${cells.join(" | ")} | ${marker} |`);
    }
    lines.push("");
  }
  for (const view of views) {
    lines.push(`## ${agentLabel(view.agent)}`, "");
    if (view.sources.length === 0) {
      lines.push("Loads no instruction file for this file.", "");
      continue;
    }
    view.sources.forEach((source, index) => {
      const cut = source.truncation === null ? "" : ` — ✂ ${truncationText(source.truncation)} (byte ${source.truncation.byte})`;
      lines.push(`${index + 1}. \`${source.path}\`${cut}: ${source.why}`);
    });
    lines.push("");
  }
  return lines.join("\n");
}
