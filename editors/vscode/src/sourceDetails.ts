/**
 * "Show Why": the whole explanation of one row of the Instructions view, as the text of a
 * read-only Markdown document. Pure.
 *
 * A read-only virtual document rather than a webview: the text wraps at any width, can be
 * searched, selected and copied, follows the editor's theme and font, and needs no HTML, no
 * script and no content security policy. Rather than children of the row: a child row is cut
 * at the side bar's width just like the description it would replace.
 *
 * For a source: where it sits in the delivery order, its kind, scope and depth, its precedence
 * worked out (100 × depth + slot), the link it is, what was removed from it, why it applies
 * (`why_effective`), the conflicts it takes part in (which file it overrides here and which
 * file overrides it), and the files not delivered because of it (superseded by it, aliases of
 * it). For an ignored file: why it is not delivered.
 */

import type { IgnoredEntry, Snapshot, Source } from "./protocol";
import {
  IGNORED_PREFIX,
  PRECEDENCE_RULE,
  SOURCE_PREFIX,
  ignoredReason,
  redactionText,
  scopeName,
} from "./instructionsView";

export const SHOW_WHY_COMMAND = "rutter.showWhy";

function ordinalWord(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) {
    return `${n}th`;
  }
  switch (n % 10) {
    case 1:
      return `${n}st`;
    case 2:
      return `${n}nd`;
    case 3:
      return `${n}rd`;
    default:
      return `${n}th`;
  }
}

/** `200 = 100 × depth 2 + slot 0 (AGENTS)`. */
export function precedenceText(source: Source): string {
  const slot = source.precedence - 100 * source.depth;
  return `${source.precedence} = 100 × depth ${source.depth} + slot ${slot} (${slotName(slot)})`;
}

function slotName(slot: number): string {
  switch (slot) {
    case 0:
      return "AGENTS";
    case 1:
      return "CLAUDE.md";
    case 2:
      return ".claude/CLAUDE.md";
    case 3:
      return ".prayu/instructions.md";
    default:
      return slot >= 10 ? `rule ${slot - 9} of its level` : `slot ${slot}`;
  }
}

function deliveryText(source: Source, count: number): string {
  const place = `${ordinalWord(source.ordinal)} of ${count}`;
  if (count === 1) {
    return `${place}: the only source.`;
  }
  if (source.ordinal === 1) {
    return `${place}: agents read it first.`;
  }
  if (source.ordinal === count) {
    return `${place}: agents read it last.`;
  }
  const before = source.ordinal - 1;
  const after = count - source.ordinal;
  return `${place}: agents read it after ${before} ${before === 1 ? "other" : "others"} and before ${after} more.`;
}

function header(snapshot: Snapshot): string[] {
  return [
    `For \`${snapshot.target_path}\` in workspace \`${snapshot.workspace_id}\` (fingerprint \`${snapshot.fingerprint.slice(0, 12)}\`).`,
    "",
  ];
}

/** The text of "Show Why" for the source at `path` of `snapshot`. */
export function sourceDetailsText(snapshot: Snapshot, source: Source): string {
  const count = snapshot.sources.length;
  const lines = [`# ${source.ordinal}. ${source.path}`, "", ...header(snapshot)];
  lines.push(
    `- **Delivered** ${deliveryText(source, count)}`,
    `- **Kind**: \`${source.kind}\``,
    `- **Scope**: ${scopeName(source.scope)} (depth ${source.depth})`,
    `- **Precedence**: ${precedenceText(source)}; ${PRECEDENCE_RULE}.`,
  );
  if (source.link_target !== undefined) {
    lines.push(
      `- **Link**: ${source.link_stub === true ? "a git link stub" : "a link"} to \`${source.link_target}\`; its content is that file's.`,
    );
  }
  if (source.redactions.length > 0) {
    lines.push(`- **Redacted**: ${redactionText(source.redactions)}, removed before any agent sees it.`);
  }
  lines.push("", "## Why it applies", "", source.why_effective, "");
  const conflicts = snapshot.conflicts.filter(
    (conflict) => conflict.lower_precedence_path === source.path || conflict.higher_precedence_path === source.path,
  );
  lines.push("## Conflicts", "");
  if (conflicts.length === 0) {
    lines.push("None: no other source here has its role.", "");
  } else {
    for (const conflict of conflicts) {
      const overrides = conflict.higher_precedence_path === source.path;
      const role = `role \`${conflict.role}\``;
      lines.push(
        overrides
          ? `- It overrides \`${conflict.lower_precedence_path}\` here (${role}): ${conflict.resolution}.`
          : `- It is overridden here by \`${conflict.higher_precedence_path}\` (${role}): ${conflict.resolution}.`,
      );
    }
    lines.push("");
  }
  const because = snapshot.ignored.filter((entry) => entry.superseded_by === source.path || entry.alias_of === source.path);
  if (because.length > 0) {
    lines.push("## Not delivered because of it", "");
    for (const entry of because) {
      lines.push(`- \`${entry.path}\`: ${ignoredReason(entry)}.`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

/** The text of "Show Why" for an ignored file. */
export function ignoredDetailsText(snapshot: Snapshot, entry: IgnoredEntry): string {
  return [
    `# ${entry.path} (not delivered)`,
    "",
    ...header(snapshot),
    `- **Reason**: \`${entry.reason}\`: ${ignoredReason(entry)}.`,
    "",
  ].join("\n");
}

export interface Details {
  /** The document's name (its tab). */
  name: string;
  text: string;
}

function safeName(path: string): string {
  return path.replace(/[^A-Za-z0-9._-]+/g, "_");
}

/**
 * The details of a row of the view (`id` = the node's ID: `source/<path>` or
 * `ignored/<path>`); undefined for any other row or a path the snapshot does not hold.
 */
export function detailsOf(snapshot: Snapshot, id: string): Details | undefined {
  if (id.startsWith(SOURCE_PREFIX)) {
    const path = id.slice(SOURCE_PREFIX.length);
    const source = snapshot.sources.find((each) => each.path === path);
    return source === undefined
      ? undefined
      : { name: `why-${source.ordinal}-${safeName(path)}.md`, text: sourceDetailsText(snapshot, source) };
  }
  if (id.startsWith(IGNORED_PREFIX)) {
    const path = id.slice(IGNORED_PREFIX.length);
    const entry = snapshot.ignored.find((each) => each.path === path);
    return entry === undefined ? undefined : { name: `why-ignored-${safeName(path)}.md`, text: ignoredDetailsText(snapshot, entry) };
  }
  return undefined;
}
