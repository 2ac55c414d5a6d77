import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  OPEN_FILE_COMMAND,
  conflictText,
  errorNode,
  headerText,
  ignoredReason,
  instructionNodes,
  scopeName,
} from "../../src/instructionsView";
import type { Snapshot } from "../../src/protocol";
import { outline } from "../fakes";
import { snapshot } from "../instructionFixtures";

const ROOT = "/src/monorepo";

describe("instruction nodes of a snapshot", () => {
  it("lists the sources in delivery order, then conflicts, ignored, redactions, fingerprint", () => {
    assert.deepEqual(outline(instructionNodes(snapshot(), ROOT)), [
      "3 sources in delivery order; higher precedence wins where sources conflict",
      "1. AGENTS.md — agents · workspace root · precedence 0",
      "2. CLAUDE.md — claude · workspace root · precedence 1",
      "3. services/api/AGENTS.override.md — agents_override · services/api · precedence 200",
      "Conflicts (1)",
      "  AGENTS.md is overridden here by services/api/AGENTS.override.md — agents",
      "Ignored (3)",
      "  services/api/AGENTS.md — superseded by services/api/AGENTS.override.md (a non-blank AGENTS.override.md replaces AGENTS.md at its level)",
      "  .prayu/rules/drafts/wip.md — ignored by .prayu/instructions.ignore:2 (pattern .prayu/rules/drafts/)",
      "  tools/AGENTS.override.md — blank override: skipped, the level falls back to AGENTS.md",
      "Redactions (1)",
      "  CLAUDE.md — secret_assignment x1, github_token x2",
      "Fingerprint — 9ac7a4ccb96c",
    ]);
  });

  it("gives each source why_effective as tooltip and a click that opens the file", () => {
    const [, first] = instructionNodes(snapshot(), ROOT);
    assert.ok(first);
    assert.equal(first.tooltip, "workspace-root AGENTS.md; inherited by services/api/input.go (depth 0)");
    assert.deepEqual(first.command, { command: OPEN_FILE_COMMAND, title: "Open", arguments: ["/src/monorepo/AGENTS.md"] });
    assert.equal(first.contextValue, "source");
  });

  it("opens the winning file of a conflict and the file of an ignored entry", () => {
    const nodes = instructionNodes(snapshot(), ROOT);
    const conflicts = nodes.find((node) => node.id === "conflicts");
    const ignored = nodes.find((node) => node.id === "ignored");
    assert.deepEqual(conflicts?.children?.[0]?.command?.arguments, ["/src/monorepo/services/api/AGENTS.override.md"]);
    assert.equal(conflicts?.children?.[0]?.tooltip, snapshot().conflicts[0]?.resolution);
    assert.deepEqual(ignored?.children?.[1]?.command?.arguments, ["/src/monorepo/.prayu/rules/drafts/wip.md"]);
  });

  it("omits empty groups and says when nothing applies", () => {
    const empty = { ...snapshot(), sources: [], ignored: [], conflicts: [] };
    assert.deepEqual(outline(instructionNodes(empty, ROOT)), [
      "No instruction file applies to this file — services/api/input.go",
      "Fingerprint — 9ac7a4ccb96c",
    ]);
  });

  it("has no click without a known root", () => {
    const [, first] = instructionNodes(snapshot(), undefined);
    assert.equal(first?.command, undefined);
  });

  it("uses Windows separators under a Windows root", () => {
    const [, , , third] = instructionNodes(snapshot(), "C:\\src\\monorepo");
    assert.deepEqual(third?.command?.arguments, ["C:\\src\\monorepo\\services\\api\\AGENTS.override.md"]);
  });
});

describe("the header, scopes and conflicts in words", () => {
  it("says how many sources, their order and the precedence rule", () => {
    assert.equal(headerText(9), "9 sources in delivery order; higher precedence wins where sources conflict");
    assert.equal(headerText(1), "1 source in delivery order; higher precedence wins where sources conflict");
    const [header] = instructionNodes(snapshot(), ROOT);
    assert.equal(header?.id, "header");
    assert.equal(header?.command, undefined);
    assert.match(header?.tooltip ?? "", /the one further down wins/);
    assert.match(header?.tooltip ?? "", /services\/api\/input\.go/);
  });

  it("names the root scope in words and keeps other scopes as directories", () => {
    assert.equal(scopeName("."), "workspace root");
    assert.equal(scopeName("services/api"), "services/api");
  });

  it("words a conflict as layering, never as A < B", () => {
    const text = conflictText({ lower_precedence_path: "AGENTS.md", higher_precedence_path: "services/api/AGENTS.md" });
    assert.equal(text, "AGENTS.md is overridden here by services/api/AGENTS.md");
    const labels = outline(instructionNodes(snapshot(), ROOT));
    assert.ok(labels.every((line) => !line.includes(" < ")));
  });

  it("numbers the sources with their ordinals and marks rows that can show why", () => {
    const nodes = instructionNodes(snapshot(), ROOT);
    const sources = nodes.filter((node) => node.contextValue === "source");
    assert.deepEqual(sources.map((node) => node.label.split(" ")[0]), ["1.", "2.", "3."]);
    const ignored = nodes.find((node) => node.id === "ignored");
    assert.deepEqual(ignored?.children?.map((node) => node.contextValue), ["ignored", "ignored", "ignored"]);
  });
});

describe("the error node", () => {
  it("shows the typed reason when discovery fails closed, and opens the file it names", () => {
    const nodes = instructionNodes(
      {
        error: {
          code: "invalid_utf8",
          message: "services/web/.prayu/rules/broken.md is not valid UTF-8 (first bad byte at offset 19); save it as UTF-8",
          path: "services/web/.prayu/rules/broken.md",
          details: { offset: 19 },
        },
      },
      ROOT,
    );
    assert.deepEqual(outline(nodes), [
      "Discovery failed closed: no instructions are delivered — invalid_utf8",
      "  services/web/.prayu/rules/broken.md is not valid UTF-8 (first bad byte at offset 19); save it as UTF-8",
      "  services/web/.prayu/rules/broken.md — path",
      "  offset=19 — details",
    ]);
    assert.equal(nodes[0]?.icon, "error");
    assert.deepEqual(nodes[0]?.children?.[1]?.command?.arguments, ["/src/monorepo/services/web/.prayu/rules/broken.md"]);
  });

  it("says a file outside every served folder is not served (no fail-closed wording)", () => {
    const node = errorNode({ code: "not_registered", message: "/tmp/x is not inside a workspace folder", path: "/tmp/x" }, undefined);
    assert.equal(node.label, "Not in a workspace rutter serves");
    assert.equal(node.description, "not_registered");
    assert.deepEqual(outline(node.children ?? []), ["/tmp/x is not inside a workspace folder"]);
  });
});

describe("ignored reasons", () => {
  it("keeps an unknown reason as the server wrote it", () => {
    assert.equal(ignoredReason({ path: "x", reason: "something_new" }), "something_new");
  });
});

describe("links inside the workspace (docs/reference/discovery.md)", () => {
  function linked(): Snapshot {
    const base = snapshot();
    return {
      ...base,
      sources: [
        ...base.sources.slice(0, 1),
        {
          ordinal: 2, path: "docs/CLAUDE.md", kind: "claude", scope: "docs", depth: 1, precedence: 101,
          why_effective: "docs/CLAUDE.md; a link to docs/CONTRIBUTING.md, whose content it delivers",
          redacted: false, redactions: [], content_sha256: "d".repeat(64), link_target: "docs/CONTRIBUTING.md",
        },
        {
          ordinal: 3, path: "stubs/CLAUDE.md", kind: "claude", scope: "stubs", depth: 1, precedence: 101,
          why_effective: "stubs/CLAUDE.md", redacted: false, redactions: [], content_sha256: "e".repeat(64),
          link_target: "stubs/NOTES.md", link_stub: true,
        },
      ],
      ignored: [
        { path: "CLAUDE.md", reason: "alias", alias_of: "AGENTS.md" },
        { path: "win/CLAUDE.md", reason: "alias", alias_of: "win/AGENTS.md", link_stub: true },
      ],
      conflicts: [],
    };
  }

  it("shows where a linked source leads, and an alias with the source it repeats", () => {
    assert.deepEqual(outline(instructionNodes(linked(), ROOT)), [
      "3 sources in delivery order; higher precedence wins where sources conflict",
      "1. AGENTS.md — agents · workspace root · precedence 0",
      "2. docs/CLAUDE.md — claude · docs · precedence 101 · → docs/CONTRIBUTING.md",
      "3. stubs/CLAUDE.md — claude · stubs · precedence 101 · stub → stubs/NOTES.md",
      "Ignored (2)",
      "  CLAUDE.md — alias of AGENTS.md (a link to it; not delivered twice)",
      "  win/CLAUDE.md — alias of win/AGENTS.md (a git link stub naming it; not delivered twice)",
      "Fingerprint — 9ac7a4ccb96c",
    ]);
  });

  it("marks a linked source with the link icon and opens the link itself", () => {
    const [, , link] = instructionNodes(linked(), ROOT);
    assert.equal(link?.icon, "file-symlink-file");
    assert.deepEqual(link?.command?.arguments, ["/src/monorepo/docs/CLAUDE.md"]);
  });
});
