/**
 * A run's pinned stack beside the live one: the two read-only documents of "Show Pinned and
 * Live Instructions" (VS Code's diff editor puts them side by side). Pure.
 *
 * Each side lists the stack as the Instructions view does (the header, then `ordinal. path —
 * kind · scope · precedence N`), its ignored files, its fingerprint, and then each source's
 * delivered (redacted) text under its own heading, so the diff shows both a change of order
 * and a change of a line. A live side on which discovery fails closed says so with the typed
 * reason; a run with no revision yet says that.
 */

import type { ErrorAnswer, RunInspection, Snapshot } from "./protocol";
import { isErrorAnswer } from "./protocol";
import type { ReadOnlyText } from "./ports";
import { headerText, ignoredReason, sourceDescription } from "./instructionsView";

function stackLines(snapshot: Snapshot): string[] {
  const lines = [`target: ${snapshot.target_path} (workspace ${snapshot.workspace_id})`, `fingerprint: ${snapshot.fingerprint}`, ""];
  if (snapshot.sources.length === 0) {
    lines.push("No instruction file applies.", "");
  } else {
    lines.push(headerText(snapshot.sources.length), "");
    for (const source of snapshot.sources) {
      lines.push(`${source.ordinal}. ${source.path} — ${sourceDescription(source)}`);
    }
    lines.push("");
  }
  if (snapshot.ignored.length > 0) {
    lines.push("Not delivered:");
    for (const entry of snapshot.ignored) {
      lines.push(`- ${entry.path} — ${ignoredReason(entry)}`);
    }
    lines.push("");
  }
  for (const source of snapshot.sources) {
    lines.push(`==== ${source.ordinal}. ${source.path} ====`);
    const content = source.content ?? `(content not sent; sha256 ${source.content_sha256})`;
    lines.push(...content.replace(/\n$/, "").split("\n"), "");
  }
  return lines;
}

export function pinnedText(inspection: RunInspection): string {
  const title = `# Run ${inspection.run_id}: pinned instructions (${inspection.revision === null ? "no revision yet" : `revision ${inspection.revision}`})`;
  if (inspection.pinned === null) {
    return [title, "", "The run has no pinned revision yet: nothing was pinned.", ""].join("\n");
  }
  return [title, "", ...stackLines(inspection.pinned)].join("\n");
}

export function liveText(inspection: RunInspection): string {
  const live: Snapshot | ErrorAnswer = inspection.live;
  const title = `# Run ${inspection.run_id}: the instructions on disk now (${inspection.stale ? "stale: they differ from the pinned ones" : "the same as pinned"})`;
  if (isErrorAnswer(live)) {
    return [
      title,
      "",
      `Discovery fails closed now (${live.error.code}): ${live.error.message}`,
      "The run keeps its pinned instructions until the files are fixed.",
      "",
    ].join("\n");
  }
  return [title, "", ...stackLines(live)].join("\n");
}

/** The two sides and the diff editor's title. */
export function runStacks(inspection: RunInspection): { left: ReadOnlyText; right: ReadOnlyText; title: string } {
  const revision = inspection.revision === null ? "no revision" : `revision ${inspection.revision}`;
  return {
    left: { name: `${inspection.run_id}-pinned.md`, text: pinnedText(inspection) },
    right: { name: `${inspection.run_id}-live.md`, text: liveText(inspection) },
    title: `${inspection.run_id}: pinned (${revision}) ↔ on disk now${inspection.stale ? " (stale)" : ""}`,
  };
}
