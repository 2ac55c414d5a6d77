import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { Choices, PIN_REPLY, PinCommands, REMOVE, REPLY_ONLY } from "../../src/pins";
import { PROPOSAL_CONTEXT, proposalIdOf, proposalNodes } from "../../src/pinsView";
import type { Pin, Proposal } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";
import { run } from "../fixtures";

function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    proposal_id: "prop_01",
    thread_id: "thr_01",
    workspace_id: "shop",
    run_id: "run_01",
    text: "Keep the public API stable.",
    proposed_by: "mcp",
    proposed_by_person: "alice",
    status: "pending",
    choice: null,
    pin_id: null,
    created_at: "2026-12-03T10:00:00Z",
    ...overrides,
  };
}

function pin(overrides: Partial<Pin> = {}): Pin {
  return { pin_id: "pin_01", thread_id: "thr_01", text: "Keep the public API stable.", redacted: false, proposal_id: null, version: 1, ...overrides };
}

interface Script {
  proposals: Proposal[];
  answer?: (params: Record<string, unknown>) => unknown;
  pins?: Pin[];
}

function setup(script: Script) {
  const editor = new FakeEditor();
  const server = new FakeServer((method, params) => {
    const given = params as Record<string, unknown>;
    switch (method) {
      case Methods.pinProposals:
        return { proposals: script.proposals, has_more: false };
      case Methods.pinAnswer: {
        if (script.answer !== undefined) {
          return script.answer(given);
        }
        const pinned = given.choice === "pin" || given.pin === true;
        script.proposals = script.proposals.filter((each) => each.proposal_id !== given.proposal_id);
        return { proposal: proposal({ status: "answered", choice: given.choice as Proposal["choice"] }), pin: pinned ? pin() : null };
      }
      case Methods.runs:
        return { runs: [{ ...run(), thread_id: "thr_01" }] };
      case Methods.pinList:
        return { thread_id: "thr_01", run_id: null, pins: script.pins ?? [], count: 0, total_chars: 0 };
      case Methods.pinAdd:
        return pin({ text: String(given.text) });
      case Methods.pinEdit:
        return pin({ text: String(given.text), version: 2 });
      case Methods.pinRemove:
        return { pin_id: "pin_01", thread_id: "thr_01", version: 1, removed: true };
      case Methods.effectiveInstructions:
      case Methods.memoryList:
        throw new Error("not under test");
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  startRutter({ editor, server });
  return { editor, server };
}

function sent(server: FakeServer, method: string): unknown[] {
  return server.sent.filter((each) => each.method === method).map((each) => each.params);
}

describe("pin proposals", () => {
  it("are listed on start and announced once each, with the three choices", async () => {
    const script: Script = { proposals: [proposal()] };
    const { editor, server } = setup(script);
    server.fireStarted();
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.proposals")), ["Keep the public API stable. — shop · by alice via mcp"]);
    assert.equal(editor.notifications.length, 1);
    assert.deepEqual(editor.notifications[0]?.actions, [Choices.pin, Choices.discuss, Choices.custom]);
    assert.match(editor.notifications[0]?.text ?? "", /alice via mcp proposes to pin to this task: "Keep the public API stable."/);
    // A change elsewhere re-lists; the same proposal is not announced twice, a new one is.
    script.proposals = [proposal(), proposal({ proposal_id: "prop_02", text: "Use tabs." })];
    server.notify(Methods.pinProposalsChanged, { workspace_ids: ["shop"] });
    await settle();
    assert.equal(editor.tree("rutter.proposals").length, 2);
    assert.deepEqual(editor.notifications.map((each) => each.text.includes("Use tabs.")), [false, true]);
    assert.deepEqual(sent(server, Methods.pinAnswer), []); // nothing answered without a choice
  });

  it("Pin from the notification pins the shown text and empties the view", async () => {
    const script: Script = { proposals: [proposal()] };
    const { editor, server } = setup(script);
    editor.notifyAnswers = [Choices.pin];
    server.fireStarted();
    await settle();
    assert.deepEqual(sent(server, Methods.pinAnswer), [{ proposal_id: "prop_01", choice: "pin" }]);
    assert.deepEqual(editor.tree("rutter.proposals"), []);
    assert.match(editor.messages.at(-1)?.text ?? "", /pinned pin_01 to thread thr_01/);
  });

  it("Discuss never pins; Custom pins only when asked to", async () => {
    const script: Script = { proposals: [proposal(), proposal({ proposal_id: "prop_02" }), proposal({ proposal_id: "prop_03" })] };
    const { editor, server } = setup(script);
    editor.modalAnswers = [Choices.discuss, Choices.custom, Choices.custom];
    editor.inputAnswers = ["not now", "my words", "kept words"];
    editor.pickAnswers = [
      (items) => items.find((item) => item.label === REPLY_ONLY)?.value,
      (items) => items.find((item) => item.label === PIN_REPLY)?.value,
    ];
    server.fireStarted();
    await settle();
    assert.equal(await editor.run(PinCommands.answer, "prop_01"), "answered");
    assert.equal(await editor.run(PinCommands.answer, { id: "prop_02" }), "answered");
    assert.equal(await editor.run(PinCommands.answer, "prop_03"), "pinned");
    assert.deepEqual(sent(server, Methods.pinAnswer), [
      { proposal_id: "prop_01", choice: "discuss", text: "not now" },
      { proposal_id: "prop_02", choice: "custom", text: "my words", pin: false },
      { proposal_id: "prop_03", choice: "custom", text: "kept words", pin: true },
    ]);
  });

  it("a proposal answered elsewhere first is reported, not pinned twice", async () => {
    const conflict = Object.assign(new Error("conflict"), { data: { code: "conflict", message: "already answered" } });
    const script: Script = { proposals: [proposal()], answer: () => { throw conflict; } };
    const { editor, server } = setup(script);
    server.fireStarted();
    await settle();
    editor.modalAnswers = [Choices.pin];
    assert.equal(await editor.run(PinCommands.answer, "prop_01"), "failed");
    assert.match(editor.messages.at(-1)?.text ?? "", /cannot answer prop_01: it was already answered/);
    editor.modalAnswers = [undefined];
    assert.equal(await editor.run(PinCommands.answer, "prop_01"), "cancelled");
    assert.equal(sent(server, Methods.pinAnswer).length, 1);
  });
});

describe("pins", () => {
  it("add, edit and remove go to the thread of a picked run, with the version read", async () => {
    const script: Script = { proposals: [], pins: [pin()] };
    const { editor, server } = setup(script);
    editor.pickAnswers = [(items) => items[0]?.value];
    editor.inputAnswers = ["Answer in English."];
    await editor.run(PinCommands.add);
    editor.pickAnswers = [(items) => items[0]?.value, (items) => items[0]?.value];
    editor.inputAnswers = ["Keep the API stable."];
    await editor.run(PinCommands.edit);
    editor.pickAnswers = [(items) => items[0]?.value, (items) => items[0]?.value];
    editor.modalAnswers = [REMOVE];
    assert.equal(await editor.run(PinCommands.remove), true);
    assert.deepEqual(sent(server, Methods.pinAdd), [{ thread_id: "thr_01", text: "Answer in English." }]);
    assert.deepEqual(sent(server, Methods.pinEdit), [{ pin_id: "pin_01", version: 1, text: "Keep the API stable." }]);
    assert.deepEqual(sent(server, Methods.pinRemove), [{ pin_id: "pin_01", version: 1 }]);
  });
});

describe("proposal nodes", () => {
  it("show the first line, the workspace and the proposer, and answer on click", () => {
    const [node] = proposalNodes([proposal({ text: "line one\nline two" })]);
    assert.equal(node?.label, "line one…");
    assert.equal(node?.contextValue, PROPOSAL_CONTEXT);
    assert.deepEqual(node?.command?.arguments, ["prop_01"]);
    assert.match(node?.tooltip ?? "", /line one\nline two/);
    assert.equal(proposalIdOf(node), "prop_01");
    assert.equal(proposalIdOf("pin_01"), undefined);
  });
});
