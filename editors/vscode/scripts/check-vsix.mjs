// Checks a built .vsix: it holds what the extension needs at run time and nothing it must not.
//
//   node scripts/check-vsix.mjs rutter.vsix
//
// - the manifest, the README and the bundled dist/extension.js are there, and every icon the
//   manifest names (the activity bar's); no sources, tests or node_modules;
// - the bundle requires nothing but `vscode` and Node's built-in modules (the language client
//   is bundled in), and loads: with a stand-in for `vscode` it exports activate/deactivate.
import { readFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { inflateRawSync } from "node:zlib";
import vm from "node:vm";

/** The entries of a zip file: name → bytes (stored or deflated). */
function unzip(buffer) {
  const eocd = buffer.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) {
    throw new Error("not a zip file (no end of central directory)");
  }
  const count = buffer.readUInt16LE(eocd + 10);
  let offset = buffer.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let i = 0; i < count; i += 1) {
    if (buffer.readUInt32LE(offset) !== 0x02014b50) {
      throw new Error("corrupt central directory");
    }
    const method = buffer.readUInt16LE(offset + 10);
    const compressed = buffer.readUInt32LE(offset + 20);
    const nameLength = buffer.readUInt16LE(offset + 28);
    const extraLength = buffer.readUInt16LE(offset + 30);
    const commentLength = buffer.readUInt16LE(offset + 32);
    const local = buffer.readUInt32LE(offset + 42);
    const name = buffer.toString("utf8", offset + 46, offset + 46 + nameLength);
    const dataStart = local + 30 + buffer.readUInt16LE(local + 26) + buffer.readUInt16LE(local + 28);
    const raw = buffer.subarray(dataStart, dataStart + compressed);
    entries.set(name, method === 8 ? inflateRawSync(raw) : Buffer.from(raw));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function fail(message) {
  console.error(`check-vsix: ${message}`);
  process.exit(1);
}

const file = process.argv[2];
if (!file) {
  fail("usage: node scripts/check-vsix.mjs FILE.vsix");
}
const entries = unzip(readFileSync(file));
const names = [...entries.keys()].sort();

for (const required of ["extension/package.json", "extension/readme.md", "extension/dist/extension.js"]) {
  if (!names.some((name) => name.toLowerCase() === required)) {
    fail(`${required} is missing; the package holds: ${names.join(", ")}`);
  }
}
const unwanted = names.filter((name) => /^extension\/(src|test|scripts|node_modules)\//.test(name) || name.endsWith(".ts"));
if (unwanted.length > 0) {
  fail(`the package must not hold ${unwanted.join(", ")}`);
}

const manifest = JSON.parse(entries.get("extension/package.json").toString("utf8"));
if (manifest.main !== "./dist/extension.js") {
  fail(`package.json main is ${manifest.main}, expected ./dist/extension.js`);
}

// Every icon the manifest names (the activity bar's view container) is in the package.
for (const container of manifest.contributes?.viewsContainers?.activitybar ?? []) {
  if (!entries.has(`extension/${container.icon}`)) {
    fail(`the view container ${container.id} names the icon ${container.icon}, which the package does not hold`);
  }
}

const bundle = entries.get("extension/dist/extension.js").toString("utf8");
const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
const required = new Set();
for (const match of bundle.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)) {
  required.add(match[1]);
}
const missing = [...required].filter((name) => name !== "vscode" && !builtins.has(name));
if (missing.length > 0) {
  fail(`the bundle requires modules the package does not ship: ${missing.join(", ")}`);
}

// Load it as VS Code would, with a stand-in for the `vscode` module: every property access
// and call yields another stand-in, so top-level code of the bundle and its dependencies runs.
const standIn = new Proxy(function () {}, {
  get: (_target, key) => (key === Symbol.toPrimitive ? () => "" : standIn),
  apply: () => standIn,
  construct: () => standIn,
});
const nodeRequire = createRequire(import.meta.url);
const module = { exports: {} };
vm.runInThisContext(`(function (exports, require, module) {${bundle}\n})`)(
  module.exports,
  (name) => (name === "vscode" ? standIn : nodeRequire(name)),
  module,
);
for (const name of ["activate", "deactivate"]) {
  if (typeof module.exports[name] !== "function") {
    fail(`the bundle does not export ${name}()`);
  }
}
console.log(`check-vsix: ${file} ok (${names.length} files; the bundle needs only vscode and Node built-ins)`);
