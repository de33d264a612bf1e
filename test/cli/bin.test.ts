// The installed entry points: `node bin/arl.js` and npm 11's resolution of the package's own
// bin through `npx arl` in the repository root. Both need `npm run build` first (npm test does it).
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

describe("bin", () => {
  it("node bin/arl.js --version", async () => {
    const run = await execa("node", ["bin/arl.js", "--version"], { cwd: repo, reject: false });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(version);
  });

  it("npx arl --version runs this package's CLI", async () => {
    const run = await execa("npx", ["--no-install", "arl", "--version"], { cwd: repo, reject: false, env: { npm_config_yes: "true" } });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(version);
    expect(run.exitCode).toBe(0);
  });

  it("a closed stdout pipe ends the CLI quietly", async () => {
    const run = await execa("bash", ["-c", "node bin/arl.js --help | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}"], { cwd: repo, reject: false });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toMatch(/^[0-2]$/);
  });
});
