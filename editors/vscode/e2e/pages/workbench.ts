/**
 * The parts of VS Code's workbench a person uses, driven the way they would: the command
 * palette, Quick Open, quick picks and input boxes, the editor (typing, hover, code lens, quick
 * fixes), the Markdown preview, the Problems panel, dialogs and the side bar's views.
 *
 * Nothing here knows rutter; the rutter views have their own page objects beside this one.
 * Every wait is for something to appear or go away (PATIENCE bounds it), never for a time.
 */

import type { FrameLocator, Locator, Page } from "playwright-core";

import { PATIENCE } from "../harness";

/** Text of an element without VS Code's icon glyphs (codicons are private-use characters). */
export function plain(text: string): string {
  return text.replace(/[\uE000-\uF8FF]/g, "").replace(/\s+/g, " ").trim();
}

/** In the page: the quick input is closed, or no longer the palette (a command reused it for
 * its own question). A string: this package's TypeScript has no DOM types. */
const QUICK_INPUT_LEFT_PALETTE = `(() => {
  const widget = document.querySelector(".quick-input-widget");
  const input = widget && widget.querySelector("input.input");
  return !widget || widget.style.display === "none" || !input || !input.value.startsWith(">");
})()`;

export class Workbench {
  constructor(readonly page: Page) {}

  /** Resolves when the extension host has started extensions (the status bar is populated). */
  async ready(): Promise<void> {
    await this.page.locator(".part.statusbar").waitFor();
    await this.page.locator(".part.activitybar, .part.sidebar").first().waitFor();
  }

  // --- Quick input (palette, Quick Open, quick picks, input boxes) ---

  get quickInput(): Locator {
    return this.page.locator(".quick-input-widget");
  }

  /** The visible rows of the open quick input, as their plain label text. */
  async quickInputRows(): Promise<string[]> {
    const rows = this.quickInput.locator(".quick-input-list .monaco-list-row");
    return (await rows.allTextContents()).map(plain);
  }

  async openPalette(text: string): Promise<void> {
    await this.closeQuickInput();
    await this.page.keyboard.press("F1");
    await this.quickInput.waitFor({ state: "visible" });
    const input = this.quickInput.locator("input.input");
    await input.fill(`>${text}`);
  }

  async closeQuickInput(): Promise<void> {
    if (await this.quickInput.isVisible()) {
      await this.page.keyboard.press("Escape");
      await this.quickInput.waitFor({ state: "hidden" });
    }
  }

  /** The palette's entries for `filter` (e.g. "Rutter:"), as their labels. */
  async paletteEntries(filter: string): Promise<string[]> {
    await this.openPalette(filter);
    await this.quickInput.locator(".quick-input-list .monaco-list-row").first().waitFor();
    const rows = await this.quickInputRows();
    await this.closeQuickInput();
    return rows;
  }

  /** Run a palette command by its full title ("Rutter: Add Memory"). */
  async runCommand(title: string): Promise<void> {
    await this.openPalette(title);
    const row = this.quickInput.locator(".quick-input-list .monaco-list-row", {
      has: this.page.locator(".label-name", { hasText: exactly(title) }),
    });
    await row.first().waitFor();
    await row.first().click();
    // The palette closes, or the command reuses the quick input for its own question.
    await this.page.waitForFunction(QUICK_INPUT_LEFT_PALETTE);
  }

  /** Pick the row of the open quick pick whose label starts with `label`. */
  async pick(label: string | RegExp): Promise<void> {
    const row = this.quickInput.locator(".quick-input-list .monaco-list-row", {
      has: this.page.locator(".label-name", { hasText: label }),
    });
    await row.first().click();
  }

  /** The labels of the open quick pick's visible rows (without their descriptions). */
  async quickInputLabels(): Promise<string[]> {
    const labels = this.quickInput.locator(".quick-input-list .monaco-list-row .label-name");
    return (await labels.allTextContents()).map(plain);
  }

  /** Wait for a quick pick whose rows include `label`; returns all its visible rows. */
  async waitForPick(label: string | RegExp): Promise<string[]> {
    await this.quickInput
      .locator(".quick-input-list .monaco-list-row .label-name", { hasText: label })
      .first()
      .waitFor();
    return this.quickInputRows();
  }

  /** Answer the open input box: its prompt must match `prompt`. */
  async answerInput(prompt: string | RegExp, text: string, closes = true): Promise<void> {
    const message = this.quickInput.locator(".quick-input-message", { hasText: prompt });
    await message.waitFor();
    await this.quickInput.locator("input.input").fill(text);
    await this.page.keyboard.press("Enter");
    // The input box closes, or the command asks its next question in the same widget.
    await (closes ? this.quickInput.waitFor({ state: "hidden" }) : message.waitFor({ state: "hidden" }));
  }

  // --- Editors ---

  /** Open a workspace file with Quick Open and wait for its editor to be active. */
  async openFile(relativePath: string): Promise<void> {
    await this.closeQuickInput();
    await this.page.keyboard.press("Control+P");
    await this.quickInput.waitFor({ state: "visible" });
    await this.quickInput.locator("input.input").fill(relativePath);
    const name = relativePath.split("/").pop() ?? relativePath;
    const directory = directoryOf(relativePath);
    // The row of that very file: its name, and its folder as the description (none at the root).
    const named = this.quickInput
      .locator(".quick-input-list .monaco-list-row")
      .filter({ has: this.page.locator(".label-name", { hasText: exactly(name) }) });
    const target = (
      directory === ""
        ? named.filter({ hasNot: this.page.locator(".label-description", { hasText: /\S/ }) })
        : named.filter({ has: this.page.locator(".label-description", { hasText: exactly(directory) }) })
    ).first();
    await target.waitFor();
    await target.click();
    await this.activeTab(name).waitFor();
    await this.page.locator(".editor-instance .monaco-editor .view-lines").first().waitFor();
  }

  /** The active editor tab, by its label. */
  activeTab(label: string | RegExp): Locator {
    return this.page.locator(".tabs-container .tab.active", {
      has: this.page.locator(".label-name", { hasText: label }),
    });
  }

  get editor(): Locator {
    return this.page.locator(".editor-group-container.active .monaco-editor").first();
  }

  // --- The Markdown preview (a webview) ---

  /** Every tab (of any editor group) labelled `label` exactly. */
  tabs(label: string): Locator {
    return this.page.locator(".tabs-container .tab", {
      has: this.page.locator(".label-name", { hasText: exactly(label) }),
    });
  }

  /** The tab of the (locked) Markdown preview of the document named `name`. */
  previewTab(name: string): Locator {
    return this.activeTab(exactly(`[Preview] ${name}`));
  }

  /** The content of the visible webview (the active tab's Markdown preview): VS Code puts
   * each webview in an iframe whose own iframe `#active-frame` holds the page. */
  get preview(): FrameLocator {
    return this.page
      .locator("iframe.webview.ready:visible")
      .first()
      .contentFrame()
      .locator("iframe#active-frame")
      .contentFrame();
  }

  /** The blocks the preview renders (headings, paragraphs, list items, table rows), in
   * order, each as its text with whitespace folded (a table row: its cells, space-separated). */
  async previewBlocks(): Promise<string[]> {
    const blocks = this.preview.locator("body").locator("h1, h2, h3, h4, h5, h6, p, li, tr");
    return (await blocks.allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
  }

  /** The cells of the preview's first table, row by row (the header row first). */
  async previewTable(): Promise<string[][]> {
    const rows = this.preview.locator("table").first().locator("tr");
    const result: string[][] = [];
    for (const row of await rows.all()) {
      result.push((await row.locator("th, td").allInnerTexts()).map((text) => text.trim()));
    }
    return result;
  }

  /** The text lines the active editor shows. */
  async editorLines(): Promise<string[]> {
    return (await this.editor.locator(".view-lines .view-line").allTextContents()).map((line) =>
      line.replace(/\u00a0/g, " "),
    );
  }

  /** Put the cursor at the start of line `line` (1-based) with Go to Line. */
  async goToLine(line: number): Promise<void> {
    await this.editor.locator(".view-lines").click();
    await this.page.keyboard.press("Control+G");
    await this.quickInput.waitFor({ state: "visible" });
    await this.quickInput.locator("input.input").fill(`:${line}`);
    await this.page.keyboard.press("Enter");
    await this.quickInput.waitFor({ state: "hidden" });
  }

  /** Show the hover at the cursor (editor.action.showHover) and return its text. */
  async hoverText(expected: string | RegExp): Promise<string> {
    await this.runCommand("Show or Focus Hover");
    const hover = this.page.locator(".monaco-hover:not(.hidden) .monaco-hover-content", { hasText: expected }).first();
    await hover.waitFor();
    return plain((await hover.textContent()) ?? "");
  }

  /** The code lenses of the active editor, as their text. */
  async codeLenses(expected: string | RegExp): Promise<string[]> {
    await this.editor.locator(".codelens-decoration", { hasText: expected }).first().waitFor();
    return (await this.editor.locator(".codelens-decoration").allTextContents()).map(plain);
  }

  /** Open the quick fixes at the cursor and return their titles. */
  async quickFixes(expected: string | RegExp): Promise<string[]> {
    await this.page.keyboard.press("Control+.");
    const menu = this.page.locator(".action-widget");
    await menu.locator(".action-list-item, .monaco-list-row", { hasText: expected }).first().waitFor();
    return (await menu.locator(".action-list-item .title, .monaco-list-row .title").allTextContents()).map(plain);
  }

  /** Apply the quick fix `title` of the open menu with the keyboard, as a person would (the
   * menu's pointer block swallows synthetic clicks). */
  async applyQuickFix(title: string): Promise<void> {
    const rows = this.page.locator(".action-widget .monaco-list-row.action");
    const count = await rows.count();
    for (let moves = 0; moves <= count; moves += 1) {
      const focused = await this.page.locator(".action-widget .monaco-list-row.action.focused").getAttribute("aria-label");
      if (focused?.startsWith(title) === true) {
        await this.page.keyboard.press("Enter");
        await this.page.locator(".action-widget").waitFor({ state: "hidden" });
        return;
      }
      await this.page.keyboard.press("ArrowDown");
    }
    throw new Error(`no quick fix "${title}" in the menu`);
  }

  /** Type `lines` at the end of the active editor's document. */
  async typeAtEnd(lines: string[]): Promise<void> {
    await this.editor.locator(".view-lines").click();
    await this.page.keyboard.press("Control+End");
    for (const [index, line] of lines.entries()) {
      if (index > 0) {
        await this.page.keyboard.press("Enter");
      }
      await this.page.keyboard.type(line);
    }
  }

  async save(): Promise<void> {
    await this.page.keyboard.press("Control+S");
  }

  /** Resolves when the active tab has no unsaved changes (a save finished). */
  async savedActiveTab(): Promise<void> {
    await this.page.locator(".tabs-container .tab.active:not(.dirty)").waitFor();
  }

  // --- Panels, dialogs, notifications ---

  /** The Problems panel's rows (file headers and markers), as text. */
  async problems(expected: string | RegExp): Promise<string[]> {
    await this.runCommand("View: Focus Problems (Errors, Warnings, Infos)");
    const panel = this.page.locator(".markers-panel");
    await panel.locator(".monaco-list-row", { hasText: expected }).first().waitFor();
    return (await panel.locator(".monaco-list-row").allTextContents()).map(plain);
  }

  async closePanel(): Promise<void> {
    await this.runCommand("View: Hide Panel");
    await this.page.locator(".part.panel").waitFor({ state: "hidden" });
  }

  /** The modal dialog whose message matches `message`. */
  dialog(message: string | RegExp): Locator {
    return this.page.locator(".monaco-dialog-box", { hasText: message });
  }

  async answerDialog(message: string | RegExp, button: string): Promise<void> {
    const box = this.dialog(message);
    await box.waitFor();
    await box.locator(".monaco-button", { hasText: exactly(button) }).click();
    await box.waitFor({ state: "hidden" });
  }

  /** A notification toast whose message matches. */
  notification(message: string | RegExp): Locator {
    return this.page.locator(".notification-toast", { hasText: message });
  }

  /** Click the button `button` of the notification whose message matches `message`. */
  async answerNotification(message: string | RegExp, button: string): Promise<void> {
    const toast = this.notification(message).first();
    await toast.waitFor();
    await toast.locator(".monaco-button", { hasText: exactly(button) }).first().click();
    await toast.waitFor({ state: "hidden" });
  }

  /** The buttons of the notification whose message matches `message`, as their text. */
  async notificationButtons(message: string | RegExp): Promise<string[]> {
    const toast = this.notification(message).first();
    await toast.waitFor();
    return (await toast.locator(".monaco-button").allTextContents()).map(plain);
  }

  /** In the open quick pick of several items: tick every visible row (a click on a row ticks
   * it), then press OK. */
  async pickAll(): Promise<void> {
    const rows = this.quickInput.locator(".quick-input-list .monaco-list-row");
    const count = await rows.count();
    for (let index = 0; index < count; index += 1) {
      await rows.nth(index).click();
      // The pick counts what is ticked ("N Selected").
      await this.quickInput.getByText(exactly(`${index + 1} Selected`)).first().waitFor();
    }
    await this.quickInput.locator(".monaco-button", { hasText: exactly("OK") }).first().click();
    await this.quickInput.waitFor({ state: "hidden" });
  }

  async clearNotifications(): Promise<void> {
    await this.runCommand("Notifications: Clear All Notifications");
  }

  // --- Side bar views ---

  /** Show the pane `title` of the view container `container` as a person does: its icon in
   * the activity bar (unless the container is already open), then the pane's header; the other
   * panes of the container are collapsed, so its rows have the room. */
  async showContainerPane(container: string, title: string): Promise<Locator> {
    await this.closeQuickInput();
    const icon = this.page.locator(`.part.activitybar .action-item:has(a[aria-label^="${container}"])`).first();
    if (!((await icon.getAttribute("class")) ?? "").split(" ").includes("checked")) {
      await icon.locator("a").click();
    }
    const pane = this.paneTitled(title);
    const header = pane.locator(".pane-header").first();
    await header.waitFor();
    if ((await header.getAttribute("aria-expanded")) !== "true") {
      await header.click();
    }
    await pane.locator(".pane-header[aria-expanded=true]").waitFor();
    const others = this.page
      .locator(".part.sidebar .pane-header[aria-expanded=true]")
      .filter({ hasNot: this.page.locator(".title", { hasText: exactly(title) }) });
    while ((await others.count()) > 0) {
      await others.first().click();
    }
    return pane;
  }

  /** A pane of the side bar, by the title its header shows (a view may change its title's
   * description, and with it VS Code's aria-label). */
  paneTitled(title: string): Locator {
    return this.page.locator(".part.sidebar .pane", {
      has: this.page.locator(".pane-header .title", { hasText: exactly(title) }),
    });
  }

  /** The description VS Code shows beside a pane's title (e.g. the file a view shows). */
  async paneDescription(pane: Locator): Promise<string> {
    const description = pane.locator(".pane-header .description");
    return (await description.count()) > 0 ? plain((await description.first().textContent()) ?? "") : "";
  }

  /** Click the pane's title-bar action labelled `label` (its tooltip / aria-label). */
  async paneAction(pane: Locator, label: string): Promise<void> {
    await pane.locator(".pane-header").first().hover();
    await pane.locator(`.pane-header .action-label[aria-label^="${label}"]`).first().click();
  }

  /** Open the context menu of `row` and choose `entry`. */
  async contextMenu(row: Locator, entry: string): Promise<void> {
    await row.click({ button: "right" });
    const item = this.page.locator(".monaco-menu .action-item .action-label", { hasText: exactly(entry) });
    await item.first().waitFor();
    // The menu ignores a click right after it opened (the right button's release); pointing at
    // the entry focuses it, Enter chooses it, as with the keyboard.
    await item.first().hover();
    await this.page.locator(".monaco-menu .action-item.focused .action-label", { hasText: exactly(entry) }).waitFor();
    await this.page.keyboard.press("Enter");
    await this.page.locator(".monaco-menu").first().waitFor({ state: "hidden" });
  }

  /** Drag the side bar's edge until it is `width` pixels wide (wide: its rows' descriptions
   * show whole, as a person reading them would make room for). */
  async sideBarWidth(width: number): Promise<void> {
    const box = await this.page.locator(".part.sidebar").boundingBox();
    if (box === null || Math.abs(box.width - width) < 8) {
      return;
    }
    const y = box.y + box.height / 2;
    await this.page.mouse.move(box.x + box.width + 1, y);
    await this.page.mouse.down();
    await this.page.mouse.move(box.x + width, y, { steps: 8 });
    await this.page.mouse.up();
  }

  /** The label of the active editor tab. */
  async activeTabLabel(): Promise<string> {
    const tab = this.page.locator(".editor-group-container.active .tabs-container .tab.active .label-name").first();
    await tab.waitFor();
    return plain((await tab.textContent()) ?? "");
  }

  /** The rows a tree view shows (label and description), in order. */
  async treeRows(pane: Locator): Promise<TreeRow[]> {
    const rows = pane.locator(".monaco-list-row");
    const count = await rows.count();
    const result: TreeRow[] = [];
    for (let index = 0; index < count; index += 1) {
      const row = rows.nth(index);
      const label = plain((await row.locator(".label-name").first().textContent()) ?? "");
      const descriptions = row.locator(".label-description");
      const description = (await descriptions.count()) > 0 ? plain((await descriptions.first().textContent()) ?? "") : "";
      const level = Number((await row.getAttribute("aria-level")) ?? "1");
      result.push({ label, description, level });
    }
    return result;
  }

  /** The status bar's items, as their text. */
  async statusBarItems(): Promise<string[]> {
    return (await this.page.locator(".part.statusbar .statusbar-item").allTextContents()).map(plain);
  }
}

export interface TreeRow {
  label: string;
  description: string;
  /** 1 for a top-level row. */
  level: number;
}

/** The blocks a Markdown renderer shows for `lines` written one block a line (a heading, a
 * list item or a one-line paragraph): markers, emphasis and code ticks gone, blanks skipped. */
export function renderedBlocks(lines: string[]): string[] {
  return lines
    .filter((line) => line.trim() !== "")
    .map((line) =>
      line
        .replace(/^#{1,6}\s+/, "")
        .replace(/^\s*[-*]\s+/, "")
        .replace(/\*\*/g, "")
        .replace(/`/g, "")
        .replace(/\s+/g, " ")
        .trim(),
    );
}

export function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
}

function directoryOf(relativePath: string): string {
  const index = relativePath.lastIndexOf("/");
  return index < 0 ? "" : relativePath.slice(0, index);
}

export const WAIT = { timeout: PATIENCE };
