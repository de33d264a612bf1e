// The installed entry points: `node bin/arl.js` and npm 11's resolution of the package's own
// bin through `npx arl` in the repository root. Both need `npm run build` first (npm test does it).
import { execa } from "execa";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const version = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/**
 * What `npx` sees of a fresh clone after `npm ci`, without the install: the package's own files
 * and built dist/ copied (no sources, so a rebuild would fail), and a node_modules whose entries
 * link this checkout's installed packages one by one. npx gets a private npm cache, so the user's
 * ~/.npm/_npx is neither used nor changed.
 */
const checkouts: string[] = [];
afterAll(() => {
  for (const root of checkouts) rmSync(root, { recursive: true, force: true });
});

function installedCheckout(): { dir: string; env: Record<string, string> } {
  const root = mkdtempSync(path.join(tmpdir(), "arl-npx-"));
  checkouts.push(root);
  const dir = path.join(root, "arl");
  mkdirSync(dir);
  for (const entry of ["package.json", "package-lock.json", "bin", "scripts", "dist"])
    cpSync(path.join(repo, entry), path.join(dir, entry), { recursive: true });
  const installed = realpathSync(path.join(repo, "node_modules"));
  mkdirSync(path.join(dir, "node_modules"));
  for (const name of readdirSync(installed)) {
    if (name.startsWith(".") && name !== ".bin") continue;
    symlinkSync(path.join(installed, name), path.join(dir, "node_modules", name));
  }
  return {
    dir,
    env: {
      npm_config_cache: path.join(root, "npm-cache"),
      npm_config_offline: "true",
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    },
  };
}

describe("bin", () => {
  it("node bin/arl.js --version", async () => {
    const run = await execa("node", ["bin/arl.js", "--version"], { cwd: repo, reject: false });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(version);
  });

  it("npx arl --version runs this package's CLI", async () => {
    const run = await execa("npx", ["--no-install", "arl", "--version"], {
      cwd: repo,
      reject: false,
      env: { npm_config_yes: "true" },
    });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(version);
    expect(run.exitCode).toBe(0);
  });

  it("two concurrent first `npx arl` calls in a fresh checkout both run its CLI, and neither rebuilds dist/", async () => {
    // npm installs the checkout into its npx cache on the first call and runs `prepare` there; a
    // build at that point took half a minute and, when it failed, left a cache entry that failed
    // every later call with "enoent ... _npx/.../package.json" (exit 254).
    const { dir, env } = installedCheckout();
    const built = path.join(dir, "dist/cli/main.js");
    const builtAt = statSync(built).mtimeMs;
    const calls = await Promise.all(
      [0, 1].map(() => execa("npx", ["arl", "--version"], { cwd: dir, env, reject: false })),
    );
    for (const call of calls) {
      expect(call.stderr).toBe("");
      expect(call.stdout).toBe(version);
      expect(call.exitCode).toBe(0);
    }
    expect(statSync(built).mtimeMs).toBe(builtAt);
    const later = await execa("npx", ["arl", "--version"], { cwd: dir, env, reject: false });
    expect([later.exitCode, later.stdout]).toEqual([0, version]);
  }, 180_000);

  it("without a built dist/, says how to build it instead of a stack trace", async () => {
    const { dir } = installedCheckout();
    rmSync(path.join(dir, "dist"), { recursive: true });
    const run = await execa("node", ["bin/arl.js", "--version"], { cwd: dir, reject: false });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("arl: cannot start: Cannot find module");
    expect(run.stderr).toContain(`Run 'npm ci' in ${dir}${path.sep}`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("a closed stdout pipe ends the CLI quietly", async () => {
    const run = await execa("bash", ["-c", "node bin/arl.js --help | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}"], {
      cwd: repo,
      reject: false,
    });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toMatch(/^[0-2]$/);
  });
});
