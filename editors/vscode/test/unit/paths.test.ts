import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { resolvePath, workspaceRoot } from "../../src/paths";

describe("workspaceRoot", () => {
  it("strips the target path from the file path", () => {
    assert.equal(workspaceRoot("/src/mono/services/api/input.go", "services/api/input.go"), "/src/mono");
    assert.equal(workspaceRoot("/input.go", "input.go"), "/");
  });

  it("is undefined when the path does not end with the target", () => {
    assert.equal(workspaceRoot("/src/mono/other.go", "services/api/input.go"), undefined);
    assert.equal(workspaceRoot("/src/mono/xinput.go", "input.go"), undefined);
  });

  it("handles Windows paths, without case", () => {
    assert.equal(workspaceRoot("c:\\Src\\Mono\\services\\api\\input.go", "services/api/input.go"), "c:\\Src\\Mono");
    assert.equal(workspaceRoot("C:\\mono\\Services\\input.go", "services/input.go"), "C:\\mono");
  });

  it("takes the path itself for the root target", () => {
    assert.equal(workspaceRoot("/src/mono/", "."), "/src/mono");
  });
});

describe("resolvePath", () => {
  it("joins relative paths to the root and keeps absolute ones", () => {
    assert.equal(resolvePath("/src/mono", "a/b.md"), "/src/mono/a/b.md");
    assert.equal(resolvePath("/", "a.md"), "/a.md");
    assert.equal(resolvePath(undefined, "/etc/x"), "/etc/x");
    assert.equal(resolvePath(undefined, "a.md"), undefined);
    assert.equal(resolvePath("D:\\w", "a/b.md"), "D:\\w\\a\\b.md");
  });
});
