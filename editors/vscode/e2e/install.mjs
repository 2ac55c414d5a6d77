// Installs what the real-editor suite needs, from the package registries only:
//
//   node e2e/install.mjs        (npm run e2e:install; `npm run test:e2e` runs it first)
//
// - Debian packages `chromium ripgrep build-essential libkrb5-dev` when one is missing (as
//   root: apt-get; otherwise it stops and names them). Nothing is done when all are there.
// - code-server CODE_SERVER_VERSION from the npm registry into a cache folder keyed by its
//   version: `$RUTTER_E2E_CACHE`, else `$XDG_CACHE_HOME/rutter-e2e`, else `~/.cache/rutter-e2e`,
//   then `code-server-<version>/`. A finished install has a `.installed` marker; a warm cache
//   is used as it is. An install goes into a `.partial-<pid>` folder that is renamed when it
//   is complete, so an interrupted one never looks finished.
//
// What a code-server install needs on a machine that reaches only the registries (issue 19):
// - as root, its postinstall refuses to run without `npm_config_unsafe_perm=true`;
// - native modules (argon2, node-pty, kerberos, spdlog, …) build against the system Node's
//   headers (`npm_config_nodedir` = the prefix holding `include/node`), never downloaded ones;
// - node-pty's postinstall calls `npx`, which must not ask (`npm_config_yes=true`);
// - npm blocks dependencies' install scripts unless a project's `allowScripts` names them, and
//   refuses an allow list on its command line or in its environment (which is where a nested
//   npm started by a lifecycle script finds its parent's configuration). So code-server's own
//   postinstall (an `npm install` in lib/vscode and in lib/vscode/extensions) is not run by npm:
//   the allow lists are written into those two package.json files and postinstall.sh is run
//   here, as npm would run it;
// - @vscode/ripgrep's postinstall downloads rg from outside the registries unless its cache
//   (`$TMPDIR/vscode-ripgrep-cache-<its version>/<asset>`) holds the archive: a tar.gz of
//   Debian's `rg` is placed there first, in a TMPDIR of our own.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

export const CODE_SERVER_VERSION = "4.100.3";
/** The @vscode/ripgrep of code-server 4.100.3 (lib/vscode/npm-shrinkwrap.json) and the rg
 * release its postinstall asks for. */
const RIPGREP_PACKAGE_VERSION = "1.15.11";
const RIPGREP_ASSET_VERSION = "v13.0.0-10";
/** Dependencies of lib/vscode and lib/vscode/extensions whose install scripts must run (the
 * Windows-only ones are left out). */
const ALLOWED_SCRIPTS = [
  "@parcel/watcher",
  "@vscode/deviceid",
  "@vscode/ripgrep",
  "@vscode/spdlog",
  "kerberos",
  "native-watchdog",
  "node-pty",
  "esbuild",
];
export const APT_PACKAGES = ["chromium", "ripgrep", "build-essential", "libkrb5-dev"];
export const CHROMIUM = "/usr/bin/chromium";

export function cacheRoot() {
  if (process.env.RUTTER_E2E_CACHE) {
    return path.resolve(process.env.RUTTER_E2E_CACHE);
  }
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(xdg, "rutter-e2e");
}

export function codeServerDir() {
  return path.join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`);
}

/** The code-server launcher inside the cache (`node_modules/.bin/code-server`). */
export function codeServerBin() {
  return path.join(codeServerDir(), "node_modules", ".bin", "code-server");
}

function log(message) {
  process.stderr.write(`e2e install: ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: "inherit", ...options });
  if (result.error) {
    throw result.error;
  }
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status ?? result.signal}`);
  }
}

function aptInstalled(name) {
  const result = spawnSync("dpkg-query", ["-W", "-f=${db:Status-Status}", name], { encoding: "utf8" });
  return result.status === 0 && result.stdout.trim() === "installed";
}

/** The Debian packages, installed with apt-get when one is missing (idempotent). */
export function ensureAptPackages() {
  const missing = APT_PACKAGES.filter((name) => !aptInstalled(name));
  if (missing.length === 0) {
    log(`Debian packages present (${APT_PACKAGES.join(" ")})`);
    return;
  }
  if (process.getuid?.() !== 0) {
    throw new Error(`missing Debian packages; install them first: apt-get install ${missing.join(" ")}`);
  }
  log(`installing Debian packages: ${missing.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  run("apt-get", ["update", "-qq"], { env });
  run("apt-get", ["install", "-y", "-qq", ...missing], { env });
}

/** The environment without what an enclosing `npm run` set (its project's configuration and
 * prefix must not leak into the installs of the cache folder). */
function outsideNpm(environment) {
  return Object.fromEntries(
    Object.entries(environment).filter(([key]) => !/^npm_(config|package|lifecycle)_/i.test(key) && key !== "INIT_CWD"),
  );
}

/** The prefix of the running Node whose `include/node` holds its headers. */
function nodeHeadersPrefix() {
  const candidates = [path.dirname(path.dirname(process.execPath)), process.config.variables.node_prefix];
  for (const prefix of candidates) {
    if (prefix && fs.existsSync(path.join(prefix, "include", "node", "node.h"))) {
      return prefix;
    }
  }
  throw new Error(`no Node headers (include/node/node.h) beside ${process.execPath}; native modules cannot build`);
}

function ripgrepTarget() {
  switch (process.arch) {
    case "x64":
      return "x86_64-unknown-linux-musl";
    case "arm64":
      return "aarch64-unknown-linux-musl";
    default:
      throw new Error(`no ripgrep target known for ${process.arch}`);
  }
}

/** Put a tar.gz of Debian's rg where @vscode/ripgrep's postinstall looks before downloading. */
function seedRipgrepCache(tmpdir) {
  const rg = "/usr/bin/rg";
  if (!fs.existsSync(rg)) {
    throw new Error("/usr/bin/rg is missing (Debian package ripgrep)");
  }
  const cache = path.join(tmpdir, `vscode-ripgrep-cache-${RIPGREP_PACKAGE_VERSION}`);
  fs.mkdirSync(cache, { recursive: true });
  const staging = fs.mkdtempSync(path.join(tmpdir, "rg-"));
  fs.copyFileSync(rg, path.join(staging, "rg"));
  fs.chmodSync(path.join(staging, "rg"), 0o755);
  const archive = path.join(cache, `ripgrep-${RIPGREP_ASSET_VERSION}-${ripgrepTarget()}.tar.gz`);
  execFileSync("tar", ["-czf", archive, "-C", staging, "rg"]);
  fs.rmSync(staging, { recursive: true, force: true });
}

/** Allow the install scripts of ALLOWED_SCRIPTS in the project of `packageJson`. */
function allowScripts(packageJson) {
  const manifest = JSON.parse(fs.readFileSync(packageJson, "utf8"));
  manifest.allowScripts = Object.fromEntries(ALLOWED_SCRIPTS.map((name) => [name, true]));
  fs.writeFileSync(packageJson, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** What a usable install holds; throws naming the first thing missing. */
function checkInstall(dir) {
  const vscode = path.join(dir, "node_modules", "code-server", "lib", "vscode");
  const expected = [
    path.join(dir, "node_modules", ".bin", "code-server"),
    path.join(vscode, "node_modules", "@vscode", "ripgrep", "bin", "rg"),
    path.join(vscode, "node_modules", "node-pty", "build", "Release", "pty.node"),
    path.join(vscode, "node_modules", "@vscode", "spdlog", "build", "Release", "spdlog.node"),
    path.join(vscode, "extensions", "node_modules"),
  ];
  for (const file of expected) {
    if (!fs.existsSync(file)) {
      throw new Error(`code-server install is incomplete: ${path.relative(dir, file)} is missing`);
    }
  }
}

/** code-server in the cache folder of its version; returns that folder. */
export function ensureCodeServer() {
  const dir = codeServerDir();
  const marker = path.join(dir, ".installed");
  if (fs.existsSync(marker)) {
    log(`code-server ${CODE_SERVER_VERSION} cached in ${dir}`);
    return dir;
  }
  fs.mkdirSync(cacheRoot(), { recursive: true });
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  const tmpdir = path.join(partial, ".tmp");
  fs.mkdirSync(tmpdir, { recursive: true });
  seedRipgrepCache(tmpdir);
  fs.writeFileSync(
    path.join(partial, "package.json"),
    `${JSON.stringify(
      {
        name: "rutter-e2e-code-server",
        private: true,
        dependencies: { "code-server": CODE_SERVER_VERSION },
        // code-server's own postinstall is run below; its dependency argon2 builds here.
        allowScripts: { argon2: true },
      },
      null,
      2,
    )}\n`,
  );
  const env = {
    ...outsideNpm(process.env),
    TMPDIR: tmpdir,
    npm_config_unsafe_perm: "true",
    npm_config_nodedir: nodeHeadersPrefix(),
    npm_config_yes: "true",
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
  };
  const started = process.hrtime.bigint();
  log(`installing code-server ${CODE_SERVER_VERSION} into ${dir}`);
  run("npm", ["install", "--omit=dev"], { cwd: partial, env });
  const codeServer = path.join(partial, "node_modules", "code-server");
  for (const project of ["lib/vscode", "lib/vscode/extensions"]) {
    allowScripts(path.join(codeServer, project, "package.json"));
  }
  const npmVersion = execFileSync("npm", ["--version"], { encoding: "utf8" }).trim();
  run("sh", ["./postinstall.sh"], {
    cwd: codeServer,
    env: { ...env, npm_config_user_agent: `npm/${npmVersion} node/${process.version} ${process.platform} ${process.arch}` },
  });
  checkInstall(partial);
  fs.rmSync(tmpdir, { recursive: true, force: true });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  fs.writeFileSync(path.join(partial, ".installed"), `${CODE_SERVER_VERSION}\n`);
  if (fs.existsSync(marker)) {
    // Another install finished first: keep it.
    fs.rmSync(partial, { recursive: true, force: true });
  } else {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(partial, dir);
  }
  log(`code-server ${CODE_SERVER_VERSION} installed in ${seconds.toFixed(1)} s`);
  return dir;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const started = process.hrtime.bigint();
  ensureAptPackages();
  ensureCodeServer();
  log(`ready in ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
}
