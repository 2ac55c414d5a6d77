import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { lineDiff, reviewSummary, reviewText } from "../../src/review";
import { inspection } from "../fixtures";

describe("lineDiff", () => {
  it("keeps common lines and marks the rest", () => {
    assert.deepEqual(lineDiff("one\ntwo\nthree\n", "one\n2\nthree\nfour\n"), ["  one", "- two", "+ 2", "  three", "+ four"]);
  });

  it("handles empty sides", () => {
    assert.deepEqual(lineDiff("", "a\n"), ["+ a"]);
    assert.deepEqual(lineDiff("a", ""), ["- a"]);
    assert.deepEqual(lineDiff("", ""), []);
  });
});

describe("reviewText", () => {
  it("lists what changed and diffs each file", () => {
    const text = reviewText(inspection());
    assert.equal(
      text,
      [
        "# Review: refresh run run_01 to revision 3",
        "",
        `- pinned revision: 2 (fingerprint \`${"a".repeat(64)}\`)`,
        `- instructions on disk now: fingerprint \`${"b".repeat(64)}\``,
        "",
        "Nothing changes until you confirm. If the files change again before you do, the refresh is refused and you review again.",
        "",
        "## Added", "", "- `new/AGENTS.md`", "",
        "## Removed", "", "- `old/AGENTS.md`", "",
        "## Changed", "", "- `AGENTS.md`", "",
        "The ignored entries changed.", "",
        "### AGENTS.md", "", "```diff", "--- pinned/AGENTS.md", "+++ disk/AGENTS.md", "  one", "- two", "+ 2", "  three", "+ four", "```", "",
        "### new/AGENTS.md", "", "```diff", "--- pinned/new/AGENTS.md", "+++ disk/new/AGENTS.md", "+ fresh", "```", "",
        "### old/AGENTS.md", "", "```diff", "--- pinned/old/AGENTS.md", "+++ disk/old/AGENTS.md", "- gone", "```", "",
      ].join("\n"),
    );
  });

  it("says 'none' and revision 1 for a run with no revision yet", () => {
    const first = { ...inspection(), revision: null, pinned: null, diff: { ...inspection().diff, from_fingerprint: null } };
    assert.match(reviewText(first), /^# Review: refresh run run_01 to revision 1\n\n- pinned revision: none \(fingerprint `none`\)/);
  });
});

describe("reviewSummary", () => {
  it("says what changed and which fingerprints the confirmation is bound to", () => {
    assert.equal(
      reviewSummary(inspection()),
      [
        "added: new/AGENTS.md",
        "removed: old/AGENTS.md",
        "changed: AGENTS.md",
        "ignored entries changed",
        "",
        `From ${"a".repeat(64)}`,
        `to ${"b".repeat(64)}`,
        "Confirming pins exactly these instructions; if the files changed since this review, the refresh is refused.",
      ].join("\n"),
    );
  });
});
