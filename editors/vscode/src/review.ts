/**
 * The review a person reads before confirming a run's refresh: what changed between the
 * run's pinned snapshot and the instructions on disk, file by file, with a line diff of each
 * changed source. Pure.
 */

import type { RunInspection, Snapshot, Source } from "./protocol";
import { isErrorAnswer } from "./protocol";

/** Above this many cells (old lines × new lines) a file's diff is shown as replaced whole. */
const MAX_DIFF_CELLS = 4_000_000;
const MAX_SUMMARY_PATHS = 8;

function lines(text: string): string[] {
  if (text === "") {
    return [];
  }
  const split = text.split("\n");
  if (split[split.length - 1] === "") {
    split.pop();
  }
  return split;
}

/** A line diff (longest common subsequence): `  ` kept, `- ` removed, `+ ` added. */
export function lineDiff(before: string, after: string): string[] {
  const a = lines(before);
  const b = lines(after);
  if (a.length * b.length > MAX_DIFF_CELLS) {
    return [...a.map((line) => `- ${line}`), ...b.map((line) => `+ ${line}`)];
  }
  // common[i][j]: length of the LCS of a[i:] and b[j:].
  const width = b.length + 1;
  const common = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      common[i * width + j] =
        a[i] === b[j]
          ? (common[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(common[(i + 1) * width + j] ?? 0, common[i * width + j + 1] ?? 0);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i += 1;
      j += 1;
    } else if ((common[(i + 1) * width + j] ?? 0) >= (common[i * width + j + 1] ?? 0)) {
      out.push(`- ${a[i]}`);
      i += 1;
    } else {
      out.push(`+ ${b[j]}`);
      j += 1;
    }
  }
  for (; i < a.length; i += 1) {
    out.push(`- ${a[i]}`);
  }
  for (; j < b.length; j += 1) {
    out.push(`+ ${b[j]}`);
  }
  return out;
}

function sourcesByPath(snapshot: Snapshot | null): Map<string, Source> {
  return new Map((snapshot?.sources ?? []).map((source) => [source.path, source]));
}

export function nextRevision(inspection: RunInspection): number {
  return inspection.revision === null ? 1 : inspection.revision + 1;
}

/** The review document (Markdown). */
export function reviewText(inspection: RunInspection): string {
  const { diff } = inspection;
  const out = [
    `# Review: refresh run ${inspection.run_id} to revision ${nextRevision(inspection)}`,
    "",
    `- pinned revision: ${inspection.revision ?? "none"} (fingerprint \`${diff.from_fingerprint ?? "none"}\`)`,
    `- instructions on disk now: fingerprint \`${diff.to_fingerprint ?? "none"}\``,
    "",
    "Nothing changes until you confirm. If the files change again before you do, the refresh is refused and you review again.",
    "",
  ];
  for (const [title, paths] of [
    ["Added", diff.added],
    ["Removed", diff.removed],
    ["Changed", diff.changed],
  ] as const) {
    if (paths.length > 0) {
      out.push(`## ${title}`, "", ...paths.map((path) => `- \`${path}\``), "");
    }
  }
  if (diff.order_changed) {
    out.push("The order of the instruction files changed.", "");
  }
  if (diff.ignored_changed) {
    out.push("The ignored entries changed.", "");
  }
  const pinned = sourcesByPath(inspection.pinned);
  const live = sourcesByPath(isErrorAnswer(inspection.live) ? null : inspection.live);
  for (const path of [...diff.changed, ...diff.added, ...diff.removed]) {
    const before = pinned.get(path);
    const after = live.get(path);
    out.push(`### ${path}`, "");
    const fields = describeFieldChanges(before, after);
    if (fields !== undefined) {
      out.push(fields, "");
    }
    out.push("```diff", `--- pinned/${path}`, `+++ disk/${path}`, ...lineDiff(before?.content ?? "", after?.content ?? ""), "```", "");
  }
  return out.join("\n");
}

/** What besides the text changed (kind, scope, precedence): a line, or undefined. */
function describeFieldChanges(before: Source | undefined, after: Source | undefined): string | undefined {
  if (before === undefined || after === undefined) {
    return undefined;
  }
  const changes: string[] = [];
  for (const key of ["kind", "scope", "precedence"] as const) {
    if (before[key] !== after[key]) {
      changes.push(`${key} ${String(before[key])} → ${String(after[key])}`);
    }
  }
  return changes.length === 0 ? undefined : `Also changed: ${changes.join(", ")}.`;
}

/** The review in a few lines (the confirmation dialog's detail). */
export function reviewSummary(inspection: RunInspection): string {
  const { diff } = inspection;
  const parts: string[] = [];
  for (const [key, paths] of [
    ["added", diff.added],
    ["removed", diff.removed],
    ["changed", diff.changed],
  ] as const) {
    if (paths.length > 0) {
      const more = paths.length - MAX_SUMMARY_PATHS;
      parts.push(`${key}: ${paths.slice(0, MAX_SUMMARY_PATHS).join(", ")}${more > 0 ? ` and ${more} more` : ""}`);
    }
  }
  if (diff.order_changed) {
    parts.push("order changed");
  }
  if (diff.ignored_changed) {
    parts.push("ignored entries changed");
  }
  if (parts.length === 0) {
    parts.push("no file-level change");
  }
  return [
    ...parts,
    "",
    `From ${diff.from_fingerprint ?? "no revision"}`,
    `to ${diff.to_fingerprint ?? "?"}`,
    "Confirming pins exactly these instructions; if the files changed since this review, the refresh is refused.",
  ].join("\n");
}
