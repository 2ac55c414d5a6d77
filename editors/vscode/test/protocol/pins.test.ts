/**
 * Pin proposals against the real server: an agent's proposal (written by another process as
 * actor `mcp`, as `rutter mcp` does) reaches the extension through `rutter/pinProposalsChanged`
 * alone, shows in the Pin Proposals view with a notification offering the three choices, and
 * "Pin" pins exactly the shown text, which the CLI then lists. A pin added from the extension
 * is the CLI's too.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import { Choices, PinCommands } from "../../src/pins";
import type { PinList, Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, outline } from "../fakes";
import { REPO, RealServer, rutterCli, tempDir, uriOf, waitFor, writeTree } from "./harness";

const PROPOSE = `
import sys
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import ProposePinParams
from rutter_core.store import open_store
with open_store(sys.argv[1]) as store:
    print(Rutter(store).pins.propose(ProposePinParams(run_id=sys.argv[2], text=sys.argv[3]), actor="mcp").proposal_id)
`;

describe("pin proposals against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  let run: { run_id: string; thread_id: string };

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, { env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" }, encoding: "utf8" });
  }

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "shop");
    writeTree(root, { "AGENTS.md": "root workflow\n", "a.go": "package a\n" });
    server = await RealServer.start({ folders: [root], home });
    const answer = await server.request<Snapshot>(Methods.effectiveInstructions, {
      textDocument: { uri: uriOf(path.join(root, "a.go")) },
    });
    assert.equal(answer.workspace_id, "shop");
    run = JSON.parse(cli("run", "create", "--workspace", "shop", "--goal", "fix the parser", "--json")) as typeof run;
    editor = new FakeEditor();
    rutter = startRutter({ editor, server });
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("an agent's proposal is announced with the three choices, and Pin pins the shown text", async () => {
    editor.notifyAnswers = [Choices.pin];
    const python = process.env.RUTTER_PYTHON ?? path.join(REPO, ".venv", "bin", "python");
    const proposalId = execFileSync(
      python,
      ["-c", PROPOSE, `sqlite:///${path.join(home, "rutter.db")}`, run.run_id, "Keep the public API stable."],
      { encoding: "utf8" },
    ).trim();
    await waitFor("the notification", () => editor.notifications.length === 1);
    assert.deepEqual(editor.notifications[0]?.actions, [Choices.pin, Choices.discuss, Choices.custom]);
    await waitFor("the pin", () => editor.messages.some((message) => message.text.includes("pinned pin_")));
    const listed = JSON.parse(cli("context", "pin", "list", run.thread_id, "--json")) as PinList;
    assert.deepEqual(listed.pins.map((pin) => [pin.text, pin.proposal_id]), [["Keep the public API stable.", proposalId]]);
    await waitFor("the empty view", () => outline(editor.tree("rutter.proposals")).length === 0);
  });

  it("a pin added from the extension goes to the picked run's thread", async () => {
    editor.pickAnswers = [(items) => items[0]?.value];
    editor.inputAnswers = ["Answer in English."];
    await editor.run(PinCommands.add);
    const listed = JSON.parse(cli("context", "pin", "list", run.run_id, "--json")) as PinList;
    assert.deepEqual(listed.pins.map((pin) => pin.text), ["Keep the public API stable.", "Answer in English."]);
  });
});
