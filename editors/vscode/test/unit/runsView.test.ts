import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RunContext, runIdOf, runNodes, staleRunsOf } from "../../src/runsView";
import { outline } from "../fakes";
import { run } from "../fixtures";

describe("run nodes", () => {
  it("show the goal, then status, stale state, target, revision and ID", () => {
    const nodes = runNodes([
      run(),
      run({ run_id: "run_02", stale: true, revision: 3, live_fingerprint: "b".repeat(64) }),
      run({ run_id: "run_03", revision: null, fingerprint: null, stale: true }),
      run({ run_id: "run_04", live_error: { code: "symlink", message: "AGENTS.md is a symbolic link" } }),
      run({ run_id: "run_05", error: { code: "tampered_revision", message: "revision 1 was altered" } }),
    ]);
    assert.deepEqual(outline(nodes), [
      "fix the parser — running · instructions current · services/api · rev 1 · run_01",
      "fix the parser — running · instructions stale · services/api · rev 3 · run_02",
      "fix the parser — running · instructions stale · services/api · no revision · run_03",
      "fix the parser — running · discovery fails closed (symlink) · services/api · rev 1 · run_04",
      "fix the parser — running · unreadable (tampered_revision) · services/api · rev 1 · run_05",
    ]);
    assert.deepEqual(
      nodes.map((node) => node.contextValue),
      [RunContext.current, RunContext.stale, RunContext.stale, RunContext.liveError, RunContext.unreadable],
    );
    assert.match(nodes[1]?.tooltip ?? "", /^fix the parser\nrun run_02, running\n/);
    assert.match(nodes[1]?.tooltip ?? "", /Review and confirm refresh/);
    assert.match(nodes[3]?.tooltip ?? "", /discovery fails closed now \(symlink\): AGENTS.md is a symbolic link/);
    assert.equal(nodes[1]?.icon, "warning");
  });

  it("name the workspace when runs of several are listed", () => {
    const nodes = runNodes([run(), run({ run_id: "run_02", workspace_id: "web", target_path: "." })]);
    assert.deepEqual(outline(nodes), [
      "fix the parser — running · instructions current · shop:services/api · rev 1 · run_01",
      "fix the parser — running · instructions current · web:. · rev 1 · run_02",
    ]);
  });

  it("label a run by the first line of its goal", () => {
    const [node] = runNodes([run({ goal: "tidy the parser\nand its tests" })]);
    assert.equal(node?.label, "tidy the parser");
    assert.match(node?.tooltip ?? "", /^tidy the parser\nand its tests\n/);
  });

  it("every run's context value matches the menu's `viewItem =~ /^run/`", () => {
    for (const value of Object.values(RunContext)) {
      assert.match(value, /^run/);
    }
  });
});

describe("staleRunsOf", () => {
  it("keeps the stale runs of one workspace", () => {
    const runs = [run({ stale: true }), run({ run_id: "run_02" }), run({ run_id: "run_03", stale: true, workspace_id: "web" })];
    assert.deepEqual(staleRunsOf(runs, "shop"), [{ run_id: "run_01", revision: 1 }]);
  });

  it("counts a run made on another machine on the served workspace its drift was read from", () => {
    const elsewhere = run({ run_id: "run_04", stale: true, workspace_id: "shop-ana", machine: "other_machine", drift_workspace_id: "shop" });
    assert.deepEqual(staleRunsOf([elsewhere], "shop"), [{ run_id: "run_04", revision: 1 }]);
    assert.deepEqual(staleRunsOf([elsewhere], "shop-ana"), []);
    const [node] = runNodes([elsewhere]);
    assert.match(node?.tooltip ?? "", /workspace: shop-ana \(another machine; compared with the files of shop\)/);
  });
});

describe("runIdOf", () => {
  it("takes a view node, an ID or an object", () => {
    assert.equal(runIdOf(runNodes([run()])[0]), "run_01");
    assert.equal(runIdOf("run_09"), "run_09");
    assert.equal(runIdOf({ run_id: "run_08" }), "run_08");
    assert.equal(runIdOf({ id: "source/AGENTS.md" }), undefined);
    assert.equal(runIdOf(undefined), undefined);
  });
});
