/**
 * The server's questions (`window/showMessageRequest`: "Delete permanently" / "Cancel",
 * "Confirm refresh" / "Cancel") as modal dialogs. VS Code would show them as notifications
 * that are easy to miss or dismiss; a decision that cannot be undone deserves a modal. Pure.
 */

import type { EditorPort } from "./ports";

export const SHOW_MESSAGE_REQUEST = "window/showMessageRequest";

interface MessageRequest {
  type?: number;
  message?: unknown;
  actions?: { title?: unknown }[];
}

/** The LSP answer: the chosen `MessageActionItem`, or null when dismissed. */
export async function askAsModal(editor: EditorPort, params: unknown): Promise<{ title: string } | null> {
  const request = (params ?? {}) as MessageRequest;
  const message = typeof request.message === "string" ? request.message : "";
  const titles = (request.actions ?? [])
    .map((action) => action.title)
    .filter((title): title is string => typeof title === "string");
  // The modal has its own Cancel: a "Cancel" action would show twice.
  const offered = titles.filter((title) => title.toLowerCase() !== "cancel");
  const chosen = await editor.askModal(message, "", offered.length > 0 ? offered : ["OK"]);
  return chosen !== undefined && titles.includes(chosen) ? { title: chosen } : null;
}
