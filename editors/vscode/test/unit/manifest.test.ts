import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { VIEW_IDS } from "../../src/ports";
import { FakeEditor, FakeServer } from "../fakes";

interface Manifest {
  contributes: {
    commands: { command: string; title: string; icon?: string }[];
    viewsContainers: { activitybar: { id: string; title: string; icon: string }[] };
    views: Record<string, { id: string; name: string }[]>;
    viewsWelcome: { view: string; contents: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
  };
}

const ROOT = path.join(__dirname, "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as Manifest;
const declared = new Set(manifest.contributes.commands.map((command) => command.command));

describe("package.json", () => {
  it("puts every view in rutter's own activity bar container, with its icon", () => {
    const [container] = manifest.contributes.viewsContainers.activitybar;
    assert.equal(container?.id, "rutter");
    assert.ok(fs.existsSync(path.join(ROOT, container.icon)), container.icon);
    assert.match(fs.readFileSync(path.join(ROOT, container.icon), "utf8"), /^<svg [^>]*viewBox="0 0 24 24"/);
    assert.deepEqual(Object.keys(manifest.contributes.views), ["rutter"]);
    assert.deepEqual(manifest.contributes.views.rutter?.map((view) => view.id), [...VIEW_IDS]);
    assert.deepEqual(manifest.contributes.views.rutter?.map((view) => view.name), [
      "Instructions", "Runs", "Memory", "Session Tree", "Pin Proposals",
    ]);
  });

  it("declares every command the extension registers, and registers every command it declares", () => {
    const editor = new FakeEditor();
    const rutter = startRutter({ editor, server: new FakeServer(() => ({})) });
    const registered = new Set(editor.commands.keys());
    rutter.dispose();
    assert.deepEqual([...declared].filter((command) => !registered.has(command)), []);
    assert.deepEqual([...registered].filter((command) => !declared.has(command)), []);
  });

  it("names only declared commands in its menus and welcome links", () => {
    for (const [menu, items] of Object.entries(manifest.contributes.menus)) {
      for (const item of items) {
        assert.ok(declared.has(item.command), `${menu}: ${item.command}`);
      }
    }
    for (const welcome of manifest.contributes.viewsWelcome) {
      for (const match of welcome.contents.matchAll(/\(command:([\w.]+)\)/g)) {
        assert.ok(declared.has(match[1] ?? ""), `${welcome.view}: ${match[1]}`);
      }
    }
  });

  it("never tells a person to go to a terminal to create a run", () => {
    for (const welcome of manifest.contributes.viewsWelcome) {
      assert.doesNotMatch(welcome.contents, /rutter run create/, welcome.view);
    }
    const runs = manifest.contributes.viewsWelcome.find((welcome) => welcome.view === "rutter.runs");
    assert.match(runs?.contents ?? "", /\[Create Run\]\(command:rutter\.createRun\)/);
  });

  it("puts the agent switch and the side-by-side on the Instructions view, the history search on the Session Tree, and page turns on history documents", () => {
    const title = manifest.contributes.menus["view/title"] ?? [];
    const on = (view: string) => title.filter((item) => item.when === `view == ${view}`).map((item) => item.command);
    assert.ok(on("rutter.instructions").includes("rutter.instructions.chooseAgent"));
    assert.ok(on("rutter.instructions").includes("rutter.instructions.compareAgents"));
    assert.ok(on("rutter.sessions").includes("rutter.history.search"));
    const editorTitle = manifest.contributes.menus["editor/title"] ?? [];
    assert.deepEqual(
      editorTitle.filter((item) => item.when === "resourceScheme == rutter-history").map((item) => item.command),
      ["rutter.history.previousPage", "rutter.history.nextPage"],
    );
    const titles = new Map(manifest.contributes.commands.map((command) => [command.command, command.title]));
    assert.equal(titles.get("rutter.history.search"), "Search History…");
    assert.equal(titles.get("rutter.instructions.chooseAgent"), "Instructions for Agent…");
    assert.equal(titles.get("rutter.instructions.compareAgents"), "Compare Agents for This File");
    assert.equal(titles.get("rutter.showAssembledContext"), "Show Assembled Context");
    assert.equal(titles.get("rutter.showContextAudit"), "Show Context Audit");
  });

  it("shows Pin or Unpin on the Instructions view's title bar, by the pinned context key", () => {
    const title = manifest.contributes.menus["view/title"] ?? [];
    const pin = title.find((item) => item.command === "rutter.pinInstructions");
    const unpin = title.find((item) => item.command === "rutter.unpinInstructions");
    assert.equal(pin?.when, "view == rutter.instructions && !rutter.instructionsPinned");
    assert.equal(unpin?.when, "view == rutter.instructions && rutter.instructionsPinned");
    const runs = title.filter((item) => item.when === "view == rutter.runs").map((item) => item.command);
    assert.deepEqual(runs, ["rutter.createRun", "rutter.refreshRuns"]);
    const rows = (manifest.contributes.menus["view/item/context"] ?? [])
      .filter((item) => item.when === "view == rutter.runs && viewItem =~ /^run/")
      .map((item) => item.command);
    assert.deepEqual(new Set(rows), new Set([
      "rutter.showRunInstructions", "rutter.reviewRunRefresh", "rutter.setRunStatus",
      "rutter.showAssembledContext", "rutter.showContextAudit",
    ]));
  });
});
