import assert from "node:assert/strict";
import { describe, it } from "node:test";

import type { Snapshot } from "../../src/protocol";
import { detailsOf, ignoredDetailsText, precedenceText, sourceDetailsText } from "../../src/sourceDetails";
import { snapshot } from "../instructionFixtures";

/** The example's middle layer: overridden by a nearer AGENTS.md, overriding the root one. */
function layered(): Snapshot {
  const base = snapshot();
  return {
    ...base,
    sources: [
      ...base.sources,
      {
        ordinal: 4, path: "services/api/input/AGENTS.md", kind: "agents", scope: "services/api/input", depth: 3,
        precedence: 300, why_effective: "services/api/input/AGENTS.md; applies in its own directory",
        redacted: false, redactions: [], content_sha256: "d".repeat(64),
      },
      {
        ordinal: 5, path: "docs/CLAUDE.md", kind: "claude", scope: "docs", depth: 1, precedence: 101,
        why_effective: "docs/CLAUDE.md", redacted: false, redactions: [], content_sha256: "e".repeat(64),
        link_target: "docs/CONTRIBUTING.md", link_stub: true,
      },
    ],
    ignored: [...base.ignored, { path: "services/api/CLAUDE.md", reason: "alias", alias_of: "services/api/AGENTS.override.md" }],
    conflicts: [
      ...base.conflicts,
      {
        role: "agents", lower_precedence_path: "services/api/AGENTS.override.md",
        higher_precedence_path: "services/api/input/AGENTS.md",
        resolution: "both apply; services/api/input/AGENTS.md is nearer to the target and wins where they conflict",
      },
    ],
  };
}

describe("Show Why of a source", () => {
  it("works out the precedence from depth and slot", () => {
    const [root, claude, override] = snapshot().sources;
    assert.ok(root && claude && override);
    assert.equal(precedenceText(root), "0 = 100 × depth 0 + slot 0 (AGENTS)");
    assert.equal(precedenceText(claude), "1 = 100 × depth 0 + slot 1 (CLAUDE.md)");
    assert.equal(precedenceText(override), "200 = 100 × depth 2 + slot 0 (AGENTS)");
    assert.equal(
      precedenceText({ ...root, depth: 1, precedence: 112 }),
      "112 = 100 × depth 1 + slot 12 (rule 3 of its level)",
    );
  });

  it("says everything the row's tooltip held, and both conflict roles, as layering", () => {
    const snap = layered();
    const source = snap.sources[2];
    assert.ok(source);
    assert.equal(
      sourceDetailsText(snap, source),
      [
        "# 3. services/api/AGENTS.override.md",
        "",
        "For `services/api/input.go` in workspace `monorepo` (fingerprint `9ac7a4ccb96c`).",
        "",
        "- **Delivered** 3rd of 5: agents read it after 2 others and before 2 more.",
        "- **Kind**: `agents_override`",
        "- **Scope**: services/api (depth 2)",
        "- **Precedence**: 200 = 100 × depth 2 + slot 0 (AGENTS); higher precedence wins where sources conflict.",
        "",
        "## Why it applies",
        "",
        "services/api/AGENTS.override.md; replaces services/api/AGENTS.md",
        "",
        "## Conflicts",
        "",
        "- It overrides `AGENTS.md` here (role `agents`): both apply; services/api/AGENTS.override.md is nearer to the target and wins where they conflict.",
        "- It is overridden here by `services/api/input/AGENTS.md` (role `agents`): both apply; services/api/input/AGENTS.md is nearer to the target and wins where they conflict.",
        "",
        "## Not delivered because of it",
        "",
        "- `services/api/AGENTS.md`: superseded by services/api/AGENTS.override.md (a non-blank AGENTS.override.md replaces AGENTS.md at its level).",
        "- `services/api/CLAUDE.md`: alias of services/api/AGENTS.override.md (a link to it; not delivered twice).",
        "",
      ].join("\n"),
    );
  });

  it("names the root scope in words, a link, redactions, and the first and last place", () => {
    const snap = layered();
    const [first, second, , , last] = snap.sources;
    assert.ok(first && second && last);
    const root = sourceDetailsText(snap, first);
    assert.match(root, /- \*\*Delivered\*\* 1st of 5: agents read it first\./);
    assert.match(root, /- \*\*Scope\*\*: workspace root \(depth 0\)/);
    assert.match(root, /## Conflicts\n\n- It is overridden here by `services\/api\/AGENTS.override.md`/);
    assert.match(sourceDetailsText(snap, second), /- \*\*Redacted\*\*: secret_assignment x1, github_token x2, removed before any agent sees it\./);
    assert.match(sourceDetailsText(snap, second), /## Conflicts\n\nNone: no other source here has its role\./);
    const link = sourceDetailsText(snap, last);
    assert.match(link, /5th of 5: agents read it last\./);
    assert.match(link, /- \*\*Link\*\*: a git link stub to `docs\/CONTRIBUTING.md`; its content is that file's\./);
    assert.doesNotMatch(link, /Not delivered because of it/);
  });

  it("explains an ignored file, and finds rows by their node IDs only", () => {
    const snap = layered();
    const entry = snap.ignored[1];
    assert.ok(entry);
    assert.match(ignoredDetailsText(snap, entry), /^# \.prayu\/rules\/drafts\/wip\.md \(not delivered\)\n/);
    assert.match(ignoredDetailsText(snap, entry), /- \*\*Reason\*\*: `ignore_file`: ignored by \.prayu\/instructions\.ignore:2 \(pattern \.prayu\/rules\/drafts\/\)\./);
    assert.equal(detailsOf(snap, "source/services/api/AGENTS.override.md")?.name, "why-3-services_api_AGENTS.override.md.md");
    assert.equal(detailsOf(snap, "ignored/.prayu/rules/drafts/wip.md")?.name, "why-ignored-.prayu_rules_drafts_wip.md.md");
    assert.equal(detailsOf(snap, "source/not/there.md"), undefined);
    assert.equal(detailsOf(snap, "conflicts"), undefined);
    assert.equal(detailsOf(snap, "header"), undefined);
  });
});
