import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { FOCUS_VIEW_COMMAND, statusModel } from "../../src/statusBar";
import type { Snapshot } from "../../src/protocol";

const snapshot: Snapshot = {
  protocol_version: "project_instruction_snapshot.v1",
  workspace_id: "mono",
  target_path: "a/b.go",
  fingerprint: "f".repeat(64),
  loaded_at: "2026-12-02T10:00:00Z",
  sources: [
    { ordinal: 1, path: "AGENTS.md", kind: "agents", scope: ".", depth: 0, precedence: 0, why_effective: "w", redacted: false, redactions: [], content_sha256: "0" },
    { ordinal: 2, path: "a/AGENTS.md", kind: "agents", scope: "a", depth: 1, precedence: 100, why_effective: "w", redacted: false, redactions: [], content_sha256: "1" },
  ],
  ignored: [],
  conflicts: [],
};

describe("statusModel", () => {
  it("counts the sources and focuses the view on click", () => {
    const status = statusModel(snapshot, []);
    assert.equal(status?.text, "rutter: 2");
    assert.equal(status?.warning, false);
    assert.equal(status?.command, FOCUS_VIEW_COMMAND);
    assert.match(status?.tooltip ?? "", /2 instruction sources apply to a\/b\.go \(workspace mono\)/);
  });

  it("says one source in the singular", () => {
    const status = statusModel({ ...snapshot, sources: snapshot.sources.slice(0, 1) }, []);
    assert.match(status?.tooltip ?? "", /1 instruction source applies/);
  });

  it("marks a stale run with a warning", () => {
    const status = statusModel(snapshot, [{ run_id: "run_01", revision: 3 }]);
    assert.equal(status?.text, "rutter: 2, stale run");
    assert.equal(status?.warning, true);
    assert.match(status?.tooltip ?? "", /Run run_01: its pinned snapshot \(revision 3\) is stale/);
  });

  it("counts several stale runs in words", () => {
    const status = statusModel(snapshot, [{ run_id: "run_01", revision: 3 }, { run_id: "run_02", revision: 1 }]);
    assert.equal(status?.text, "rutter: 2, 2 stale runs");
  });

  it("says in its tooltip when the view is pinned to the file", () => {
    assert.match(statusModel(snapshot, [], undefined, true)?.tooltip ?? "", /pinned to this file/);
    assert.doesNotMatch(statusModel(snapshot, [])?.tooltip ?? "", /pinned/);
  });

  it("never shows an icon in place of words", () => {
    const texts = [
      statusModel(snapshot, []),
      statusModel(snapshot, [{ run_id: "run_01", revision: 3 }]),
      statusModel({ error: { code: "symlink", message: "m" } }, []),
      statusModel({ error: { code: "not_registered", message: "m" } }, []),
      statusModel(undefined, [], "gone"),
    ].map((status) => status?.text ?? "");
    for (const text of texts) {
      assert.match(text, /^rutter: /);
      assert.doesNotMatch(text, /\$\(/);
    }
  });

  it("marks discovery that fails closed with a warning and the typed reason", () => {
    const status = statusModel({ error: { code: "symlink", message: "tools/AGENTS.md is a symbolic link" } }, []);
    assert.equal(status?.text, "rutter: failed closed");
    assert.equal(status?.warning, true);
    assert.match(status?.tooltip ?? "", /failed closed \(symlink\)/);
    assert.match(status?.tooltip ?? "", /tools\/AGENTS.md is a symbolic link/);
  });

  it("shows an unserved file without a warning", () => {
    const status = statusModel({ error: { code: "not_registered", message: "not inside" } }, []);
    assert.equal(status?.text, "rutter: not served");
    assert.equal(status?.warning, false);
  });

  it("warns when the server did not answer, and hides with nothing to show", () => {
    assert.equal(statusModel(undefined, [], "not running")?.warning, true);
    assert.equal(statusModel(undefined, [], "not running")?.text, "rutter: no server");
    assert.equal(statusModel(undefined, []), undefined);
  });
});
