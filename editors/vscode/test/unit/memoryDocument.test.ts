import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { MemoryDocumentError, changesOf, parseMemory, renderMemory, renderNewMemory } from "../../src/memoryDocument";
import { memory } from "../fixtures";

describe("the memory document", () => {
  it("renders a record with its version and parses back to the same fields", () => {
    const record = memory({ references: ["docs/deploy.md", "ops/runbook.md"], retention_until: "2027-01-01T00:00:00Z" });
    const text = renderMemory(record);
    assert.equal(
      text,
      [
        "# memory mem_01 · project shop · version 3 · active",
        "# updated 2026-12-02T10:00:00Z by alice via lsp; created 2026-12-01T10:00:00Z by cli, person unknown",
        "# Save to store your edit (checked against version 3). Lines starting with # above the --- line are ignored.",
        "title: Deploy checklist",
        "reference: docs/deploy.md",
        "reference: ops/runbook.md",
        "retention: 2027-01-01T00:00:00Z",
        "---",
        "1. tag",
        "2. push",
        "",
        "",
      ].join("\n"),
    );
    assert.deepEqual(parseMemory(text), {
      title: "Deploy checklist",
      content: "1. tag\n2. push\n",
      references: ["docs/deploy.md", "ops/runbook.md"],
      retention: "2027-01-01T00:00:00Z",
    });
    assert.deepEqual(changesOf(record, parseMemory(text)), {});
  });

  it("keeps markdown headings and --- lines of the content", () => {
    const record = memory({ content: "# Heading\n---\nbody" });
    assert.equal(parseMemory(renderMemory(record)).content, "# Heading\n---\nbody");
  });

  it("sends only what changed", () => {
    const record = memory();
    const text = renderMemory(record).replace("title: Deploy checklist", "title: Release checklist").replace("retention: none", "retention: 30d");
    assert.deepEqual(changesOf(record, parseMemory(text)), { title: "Release checklist", retention: "30d" });
    const noRefs = renderMemory(record).replace("reference: docs/deploy.md\n", "");
    assert.deepEqual(changesOf(record, parseMemory(noRefs)), { references: [] });
  });

  it("refuses a document without separator, title or with unknown fields", () => {
    assert.throws(() => parseMemory("title: x\nbody"), MemoryDocumentError);
    assert.throws(() => parseMemory("title: \n---\nbody"), /the title is empty/);
    assert.throws(() => parseMemory("title: x\nowner: me\n---\nbody"), /line 2: unknown field "owner"/);
  });

  it("offers a template for a new memory", () => {
    const text = renderNewMemory("project", "shop");
    assert.match(text, /^# new project memory of workspace shop/);
    assert.throws(() => parseMemory(text), /the title is empty/);
    assert.deepEqual(parseMemory(text.replace("title: ", "title: Deploy") + "tag first\n"), {
      title: "Deploy",
      content: "tag first",
      references: [],
      retention: undefined,
    });
  });
});
