/**
 * The "Instructions" tree: the answer of `rutter/effectiveInstructions` for the file the view
 * shows, as view nodes. Pure: no editor state is read here.
 *
 * A header row first ("9 sources in delivery order; higher precedence wins where sources
 * conflict", the wording of docs/reference/discovery.md); then the sources in delivery order (label = `ordinal.
 * path`, description = kind · human scope · precedence, and `→ target` for a link, tooltip =
 * why_effective, click opens the file, "Show Why" opens the whole explanation, see
 * sourceDetails.ts); then the groups Conflicts (worded as layering: "A is overridden here by
 * B"), Ignored (with reasons) and Redactions, each only when it has entries; then the
 * fingerprint. A failed answer is one error node with the typed reason.
 */

import type { ErrorInfo, IgnoredEntry, InstructionsAnswer, RedactionCount, Snapshot } from "./protocol";
import { isErrorAnswer } from "./protocol";
import type { NodeCommand, ViewNode } from "./ports";
import { resolvePath } from "./paths";

export const OPEN_FILE_COMMAND = "rutter.openInstructionFile";
export const IGNORE_FILE = ".prayu/instructions.ignore";

export function openCommand(path: string | undefined): NodeCommand | undefined {
  if (path === undefined) {
    return undefined;
  }
  return { command: OPEN_FILE_COMMAND, title: "Open", arguments: [path] };
}

function withOpen(node: ViewNode, path: string | undefined): ViewNode {
  const command = openCommand(path);
  return command === undefined ? node : { ...node, command };
}

/** The precedence rule (docs/reference/discovery.md), as the header and the details say it. */
export const PRECEDENCE_RULE = "higher precedence wins where sources conflict";

/** A scope as a person says it: "workspace root" for `.`, else the directory. */
export function scopeName(scope: string): string {
  return scope === "." || scope === "" ? "workspace root" : scope;
}

/** The header row's text: how many sources, their order, and which one wins. */
export function headerText(count: number): string {
  return `${count} ${count === 1 ? "source" : "sources"} in delivery order; ${PRECEDENCE_RULE}`;
}

/** `kind · scope · precedence N`, then `· → target` for a link (`· stub → target` for a git stub). */
export function sourceDescription(source: {
  kind: string;
  scope: string;
  precedence: number;
  link_target?: string;
  link_stub?: boolean;
}): string {
  const base = `${source.kind} · ${scopeName(source.scope)} · precedence ${source.precedence}`;
  if (source.link_target === undefined) {
    return base;
  }
  return `${base} · ${source.link_stub === true ? "stub " : ""}→ ${source.link_target}`;
}

/** Why an ignored entry is not delivered, as one phrase. */
export function ignoredReason(entry: IgnoredEntry): string {
  switch (entry.reason) {
    case "superseded":
      return `superseded by ${entry.superseded_by ?? "?"} (a non-blank AGENTS.override.md replaces AGENTS.md at its level)`;
    case "ignore_file":
      return `ignored by ${IGNORE_FILE}:${entry.line ?? "?"} (pattern ${entry.pattern ?? "?"})`;
    case "blank_override":
      return "blank override: skipped, the level falls back to AGENTS.md";
    case "alias":
      return `alias of ${entry.alias_of ?? "?"} (${entry.link_stub === true ? "a git link stub naming it" : "a link to it"}; not delivered twice)`;
    default:
      return entry.reason;
  }
}

export function redactionText(redactions: RedactionCount[]): string {
  return redactions.map((item) => `${item.kind} x${item.count}`).join(", ");
}

function detailsText(details: Record<string, unknown> | undefined): string | undefined {
  if (details === undefined) {
    return undefined;
  }
  const parts = Object.keys(details)
    .sort()
    .map((key) => {
      const value = details[key];
      return `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`;
    });
  return parts.length === 0 ? undefined : parts.join(" ");
}

/** The error node: the typed reason (code), its message, and the file it names. */
export function errorNode(error: ErrorInfo, root: string | undefined): ViewNode {
  const notServed = error.code === "not_registered";
  const label = notServed
    ? "Not in a workspace rutter serves"
    : error.code === "request_failed"
      ? "No answer from the rutter server"
      : "Discovery failed closed: no instructions are delivered";
  const details = detailsText(error.details);
  const children: ViewNode[] = [
    { id: "error/message", label: error.message, tooltip: error.message, icon: "info" },
  ];
  if (error.path !== undefined && !notServed) {
    children.push(
      withOpen(
        { id: "error/path", label: error.path, description: "path", tooltip: `Open ${error.path}`, icon: "file" },
        resolvePath(root, error.path),
      ),
    );
  }
  if (details !== undefined) {
    children.push({ id: "error/details", label: details, description: "details", icon: "list-flat" });
  }
  return {
    id: "error",
    label,
    description: error.code,
    tooltip: `${error.code}: ${error.message}`,
    icon: notServed ? "circle-slash" : "error",
    iconColor: notServed ? undefined : "problemsErrorIcon.foreground",
    contextValue: "error",
    children,
    expanded: true,
  };
}

function group(id: string, label: string, children: ViewNode[], icon: string): ViewNode {
  return { id, label: `${label} (${children.length})`, icon, children, expanded: true };
}

/** A conflict as layering: the lower-precedence file is overridden here by the higher one. */
export function conflictText(conflict: { lower_precedence_path: string; higher_precedence_path: string }): string {
  return `${conflict.lower_precedence_path} is overridden here by ${conflict.higher_precedence_path}`;
}

export const SOURCE_PREFIX = "source/";
export const IGNORED_PREFIX = "ignored/";

export function headerNode(snapshot: Snapshot): ViewNode {
  return {
    id: "header",
    label: headerText(snapshot.sources.length),
    tooltip: [
      `The instruction files that apply to ${snapshot.target_path}, in the order agents receive them (1 first).`,
      `Precedence is 100 × depth + slot and grows down the list: where two sources conflict, the one further down wins (${PRECEDENCE_RULE}).`,
      'Select a source and choose "Show Why" for its whole explanation.',
    ].join("\n"),
    icon: "list-ordered",
    contextValue: "header",
  };
}

export function snapshotNodes(snapshot: Snapshot, root: string | undefined): ViewNode[] {
  const nodes: ViewNode[] = [];
  if (snapshot.sources.length === 0) {
    nodes.push({
      id: "empty",
      label: "No instruction file applies to this file",
      description: snapshot.target_path,
      icon: "info",
    });
  } else {
    nodes.push(headerNode(snapshot));
  }
  for (const source of snapshot.sources) {
    nodes.push(
      withOpen(
        {
          id: `${SOURCE_PREFIX}${source.path}`,
          label: `${source.ordinal}. ${source.path}`,
          description: sourceDescription(source),
          tooltip: source.why_effective,
          icon: source.redacted ? "shield" : source.link_target !== undefined ? "file-symlink-file" : "file",
          contextValue: "source",
        },
        resolvePath(root, source.path),
      ),
    );
  }
  if (snapshot.conflicts.length > 0) {
    nodes.push(
      group(
        "conflicts",
        "Conflicts",
        snapshot.conflicts.map((conflict) =>
          withOpen(
            {
              id: `conflict/${conflict.role}/${conflict.lower_precedence_path}/${conflict.higher_precedence_path}`,
              label: conflictText(conflict),
              description: conflict.role,
              tooltip: conflict.resolution,
              icon: "git-compare",
            },
            resolvePath(root, conflict.higher_precedence_path),
          ),
        ),
        "warning",
      ),
    );
  }
  if (snapshot.ignored.length > 0) {
    nodes.push(
      group(
        "ignored",
        "Ignored",
        snapshot.ignored.map((entry) =>
          withOpen(
            {
              id: `${IGNORED_PREFIX}${entry.path}`,
              label: entry.path,
              description: ignoredReason(entry),
              tooltip: ignoredReason(entry),
              icon: "eye-closed",
              contextValue: "ignored",
            },
            resolvePath(root, entry.path),
          ),
        ),
        "eye-closed",
      ),
    );
  }
  const redacted = snapshot.sources.filter((source) => source.redactions.length > 0);
  if (redacted.length > 0) {
    nodes.push(
      group(
        "redactions",
        "Redactions",
        redacted.map((source) =>
          withOpen(
            {
              id: `redaction/${source.path}`,
              label: source.path,
              description: redactionText(source.redactions),
              tooltip: `${redactionText(source.redactions)}: removed before any agent sees it`,
              icon: "shield",
            },
            resolvePath(root, source.path),
          ),
        ),
        "shield",
      ),
    );
  }
  nodes.push({
    id: "fingerprint",
    label: "Fingerprint",
    description: snapshot.fingerprint.slice(0, 12),
    tooltip: `${snapshot.fingerprint}\nidentifies this exact stack (paths, kinds, precedences, content digests) in workspace ${snapshot.workspace_id}`,
    icon: "key",
  });
  return nodes;
}

export function instructionNodes(answer: InstructionsAnswer, root: string | undefined): ViewNode[] {
  if (isErrorAnswer(answer)) {
    return [errorNode(answer.error, root)];
  }
  return snapshotNodes(answer, root);
}
