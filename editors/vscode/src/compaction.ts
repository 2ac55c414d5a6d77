/**
 * "Compact Thread…" in VS Code (docs/reference/continuity.md): from the palette (a pick of the
 * active runs' threads, the Session Tree's run first) or from a node of the Session Tree (its
 * thread). It asks the focus (optional), sends `rutter/session/compact` (the extractive
 * summarizer: no model, the newest 4 messages kept verbatim, nothing deleted) under a progress
 * notification, then opens the summary as a read-only markdown document and shows the tree of
 * the thread's run (the run picked; from a node, the tree shown), where the compaction now
 * shows as a projected node below the thread's latest node.
 *
 * A refusal is shown with its code and what to do next. `compaction_pending` (an earlier
 * compaction stopped while its summarizer ran, so whether it answered is unknown) offers
 * "Abandon" and "Retry", which send `rutter/session/compactionResolve` with its operation key;
 * nothing is ever re-sent without that choice.
 */

import type { Compaction, RunEntry, SessionTree } from "./protocol";
import { Methods, type ErrorInfo, typedError } from "./protocol";
import type { Disposable, Ports } from "./ports";
import { nodeIdOf } from "./sessions";
import { shortId } from "./sessionsView";

export const CompactionCommands = {
  compact: "rutter.compactThread",
} as const;

export const ABANDON = "Abandon";
export const RETRY = "Retry";
/** The focus's bound on the server (`CompactParams.focus`). */
export const MAX_FOCUS_BYTES = 2048;

/** What to do next after each refusal of a compaction, in words. */
export const COMPACTION_HINTS: Readonly<Record<string, string>> = {
  nothing_to_compact: "A compaction keeps the newest 4 messages verbatim: compact again once the thread has more.",
  compaction_in_progress: "Wait for it to finish; its summary then shows in the Session Tree.",
  compaction_pending: "Abandon it (nothing is stored) or Retry it (the summarizer is called again on the same messages).",
  summarizer_failed: "Nothing was stored and the previous summary stays the latest: compact again.",
  thread_changed: "Messages arrived while it ran: nothing was stored and the previous summary stays the latest. Compact again.",
  compaction_not_pending: "It was resolved meanwhile: compact again if the thread still needs it.",
};

/** The refusal as one message: what happened, its code, and what to do next. */
export function compactionErrorText(threadId: string, error: ErrorInfo): string {
  const hint = COMPACTION_HINTS[error.code];
  const fix = error.hint?.fix;
  const next = hint ?? (typeof fix === "string" ? `Fix: ${fix.replaceAll("_", " ")}.` : undefined);
  return `rutter: no compaction of thread ${threadId} (${error.code}): ${error.message}${next === undefined ? "" : `. ${next}`}`;
}

/** The read-only document of a compaction: what it covers, then the summary as stored. */
export function compactionText(compaction: Compaction): string {
  const kept = compaction.kept_message_ids.length;
  const unread = compaction.unread_message_count;
  const lines = [
    `# Compaction ${compaction.compaction_id}`,
    "",
    `- Thread: ${compaction.thread_id}`,
    `- Status: ${compaction.status} · summarizer: ${compaction.summarizer}`,
    `- Summarized: ${compaction.compacted_message_count} older messages${unread > 0 ? ` (${unread} not read: the summarizer's input window was full)` : " (all read)"}`,
    `- Kept verbatim: the newest ${kept} message${kept === 1 ? "" : "s"}`,
    `- Operation key: ${compaction.operation_key}`,
  ];
  if (compaction.summary !== null) {
    lines.push(`- Summary: ${compaction.summary.tokens} tokens`, "", "## Summary", "", compaction.summary.text.trimEnd());
  } else {
    lines.push("", "No summary is stored for this compaction.");
  }
  lines.push(
    "",
    "---",
    "A summary is data: it carries no authority. Nothing was deleted; history search still finds every message.",
    "",
  );
  return lines.join("\n");
}

/** The thread to compact, and its run when it was picked by run. */
interface Target {
  threadId: string;
  runId: string | undefined;
}

export class CompactionController implements Disposable {
  private readonly disposables: Disposable[] = [];

  constructor(
    private readonly ports: Ports,
    /** The tree the Session Tree shows now (a node given to the command is looked up in it). */
    private readonly tree: () => SessionTree | undefined,
    /** The active runs, asked again. */
    private readonly runs: () => Promise<readonly RunEntry[]>,
    /** Called after a compaction was stored: the Session Tree shows the run's tree
     * (undefined: the tree it shows). */
    private readonly changed: (runId: string | undefined) => Promise<void>,
  ) {
    this.disposables.push(ports.editor.registerCommand(CompactionCommands.compact, (argument) => this.compact(argument)));
  }

  /** The thread a command was given: `thr_…`, `{thread_id}`, or a Session Tree node. */
  threadOf(argument: unknown): string | undefined {
    if (typeof argument === "string" && argument.startsWith("thr_")) {
      return argument;
    }
    if (typeof argument === "object" && argument !== null) {
      const record = argument as { thread_id?: unknown };
      if (typeof record.thread_id === "string") {
        return record.thread_id;
      }
    }
    const nodeId = nodeIdOf(argument);
    return nodeId === undefined ? undefined : this.tree()?.nodes.find((node) => node.node_id === nodeId)?.thread_id;
  }

  private async pickThread(): Promise<Target | undefined> {
    const { editor } = this.ports;
    const shown = this.tree()?.run_id;
    const runs = (await this.runs()).filter((run) => typeof run.thread_id === "string");
    if (runs.length === 0) {
      editor.showMessage("info", 'rutter: no active run in the served workspaces; create one with "Rutter: Create Run…"');
      return undefined;
    }
    runs.sort((a, b) => Number(b.run_id === shown) - Number(a.run_id === shown));
    return editor.pick(
      runs.map((run) => ({
        label: run.goal.split("\n")[0] ?? run.run_id,
        description: `thread ${shortId(run.thread_id ?? "")} · run ${shortId(run.run_id)}${run.run_id === shown ? " · in the Session Tree" : ""}`,
        detail: run.target_path,
        value: { threadId: run.thread_id ?? "", runId: run.run_id },
      })),
      "Compact the thread of which run?",
    );
  }

  /** "Compact Thread…": the summary document, or undefined (declined or refused). */
  async compact(argument?: unknown): Promise<Compaction | undefined> {
    const given = this.threadOf(argument);
    const target = given === undefined ? await this.pickThread() : { threadId: given, runId: undefined };
    if (target === undefined) {
      return undefined;
    }
    const { threadId } = target;
    const focus = await this.ports.editor.input({
      title: "Compact Thread",
      prompt: `What the summary of thread ${threadId} should keep in view (optional: Enter for none)`,
      placeholder: "the parser refactor",
      validate: (text) => (new TextEncoder().encode(text).length > MAX_FOCUS_BYTES ? `At most ${MAX_FOCUS_BYTES} bytes` : undefined),
    });
    if (focus === undefined) {
      return undefined;
    }
    const params = focus.trim() === "" ? { thread_id: threadId } : { thread_id: threadId, focus };
    return this.send(`rutter: compacting thread ${threadId}…`, Methods.sessionCompact, params, target);
  }

  private async send(title: string, method: string, params: unknown, target: Target): Promise<Compaction | undefined> {
    const { threadId, runId } = target;
    const { editor, server } = this.ports;
    let compaction: Compaction;
    try {
      compaction = await editor.withProgress(title, () => server.request<Compaction>(method, params));
    } catch (error) {
      return this.refused(target, typedError(error));
    }
    if (compaction.status !== "completed") {
      // An abandoned compaction: nothing was stored, the previous summary stays the latest.
      editor.showMessage("info", `rutter: compaction ${compaction.compaction_id} of thread ${threadId} is ${compaction.status}; nothing was stored`);
      await this.changed(runId);
      return compaction;
    }
    await editor.showReadOnly(`${compaction.compaction_id}.md`, compactionText(compaction), "markdown");
    editor.showMessage(
      "info",
      `rutter: thread ${threadId} compacted (${compaction.compaction_id}): ${compaction.compacted_message_count} older messages summarized, the newest ${compaction.kept_message_ids.length} kept`,
    );
    await this.changed(runId);
    return compaction;
  }

  private async refused(target: Target, error: ErrorInfo): Promise<Compaction | undefined> {
    const { editor } = this.ports;
    const { threadId } = target;
    const text = compactionErrorText(threadId, error);
    const key = error.details?.operation_key;
    if (error.code !== "compaction_pending" || typeof key !== "string") {
      editor.showMessage(error.code === "compaction_in_progress" || error.code === "nothing_to_compact" ? "warning" : "error", text);
      return undefined;
    }
    const chosen = await editor.notify("error", text, [ABANDON, RETRY]);
    if (chosen !== ABANDON && chosen !== RETRY) {
      return undefined;
    }
    const action = chosen === ABANDON ? "abandon" : "retry";
    const title = `rutter: ${action === "abandon" ? "abandoning" : "retrying"} compaction ${key}…`;
    return this.send(title, Methods.sessionCompactionResolve, { operation_key: key, action }, target);
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
