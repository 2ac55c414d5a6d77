/**
 * The memory commands, as a person uses them: the ONE place that knows their prompts and the
 * new memory document's fields.
 */

import type { Workbench } from "./workbench";

export const ADD_COMMAND = "Rutter: Add Memory";
export const LIST_COMMAND = "Rutter: List Memories";
export const PROJECT_CHOICE = "Project";
export const USER_CHOICE = "User";

/** Fill the new memory document that "Add Memory" opened and save it. */
export async function writeNewMemory(workbench: Workbench, title: string, content: string): Promise<void> {
  await workbench.editor.locator(".view-lines .view-line", { hasText: /^title:/ }).first().waitFor();
  const lines = await workbench.editorLines();
  const titleLine = lines.findIndex((line) => line.startsWith("title:")) + 1;
  await workbench.goToLine(titleLine);
  await workbench.page.keyboard.press("End");
  await workbench.page.keyboard.type(title);
  await workbench.page.keyboard.press("Control+End");
  await workbench.page.keyboard.type(content);
  await workbench.save();
}
