/**
 * Protocol tests of links inside the workspace (docs/reference/discovery.md) against the real server: a root
 * `CLAUDE.md -> AGENTS.md` is an alias, `docs/CLAUDE.md -> CONTRIBUTING.md` a source with its
 * link target; the view shows both, and hover / code lens say so on the link itself.
 */

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { instructionNodes } from "../../src/instructionsView";
import { workspaceRoot } from "../../src/paths";
import type { InstructionsAnswer, Snapshot } from "../../src/protocol";
import { Methods, instructionsAnswer, isErrorAnswer } from "../../src/protocol";
import { outline } from "../fakes";
import { RealServer, tempDir, uriOf, writeTree } from "./harness";

describe("links inside the workspace against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  const target = () => path.join(root, "docs/guide.go");

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "linked");
    writeTree(root, {
      "AGENTS.md": "root rules\n",
      "docs/CONTRIBUTING.md": "how to contribute\n",
      "docs/guide.go": "package docs\n",
    });
    fs.symlinkSync("AGENTS.md", path.join(root, "CLAUDE.md"));
    fs.symlinkSync("CONTRIBUTING.md", path.join(root, "docs/CLAUDE.md"));
    server = await RealServer.start({ folders: [root], home });
  });

  after(async () => {
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("shows the linked source with its target and the alias under Ignored", async () => {
    const answer: InstructionsAnswer = await instructionsAnswer(
      server.request<Snapshot>(Methods.effectiveInstructions, { textDocument: { uri: uriOf(target()) } }),
    );
    assert.ok(!isErrorAnswer(answer), JSON.stringify(answer));
    assert.equal(answer.sources[1]?.link_target, "docs/CONTRIBUTING.md");
    assert.deepEqual(answer.ignored, [{ path: "CLAUDE.md", reason: "alias", alias_of: "AGENTS.md" }]);
    const rootOfAnswer = workspaceRoot(target(), answer.target_path);
    assert.deepEqual(outline(instructionNodes(answer, rootOfAnswer)), [
      "2 sources in delivery order; higher precedence wins where sources conflict",
      "1. AGENTS.md — agents · workspace root · precedence 0",
      "2. docs/CLAUDE.md — claude · docs · precedence 101 · → docs/CONTRIBUTING.md",
      "Ignored (1)",
      "  CLAUDE.md — alias of AGENTS.md (a link to it; not delivered twice)",
      `Fingerprint — ${answer.fingerprint.slice(0, 12)}`,
    ]);
  });

  it("passes hover and code lens on the link and the alias through", async () => {
    await server.open(target(), "go");
    const link = await server.open(path.join(root, "docs/CLAUDE.md"));
    const alias = await server.open(path.join(root, "CLAUDE.md"));
    const hover = (uri: string) =>
      server.connection.sendRequest<{ contents: { value: string } }>("textDocument/hover", {
        textDocument: { uri },
        position: { line: 0, character: 0 },
      });
    const lens = (uri: string) =>
      server.connection.sendRequest<{ command: { title: string } }[]>("textDocument/codeLens", { textDocument: { uri } });
    assert.match((await hover(link)).contents.value, /— \*\*effective · link to docs\/CONTRIBUTING\.md\*\*/);
    assert.match((await hover(alias)).contents.value, /— \*\*alias of AGENTS\.md: not delivered twice\*\*/);
    assert.equal((await lens(link))[0]?.command.title, "rutter: applies to 1 open file · link to docs/CONTRIBUTING.md");
    assert.equal((await lens(alias))[0]?.command.title, "rutter: alias of AGENTS.md: not delivered twice");
  });
});
