import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const suite = path.join(repo, "test", "conformance");
const suiteFiles = readdirSync(suite)
  .filter((n) => n.endsWith(".json"))
  .sort();
const suiteCases = suiteFiles.reduce(
  (n, f) => n + JSON.parse(readFileSync(path.join(suite, f), "utf8")).cases.length,
  0,
);

function workspace(files: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-conformance-"));
  for (const [name, content] of Object.entries(files))
    writeFileSync(path.join(dir, name), typeof content === "string" ? content : JSON.stringify(content));
  return dir;
}

const passAt3 = { name: "pass@3", op: "pass_at_k", input: { n: 10, c: 2, k: 3 }, expected: 1 - 56 / 120 };

describe("arl conformance", () => {
  it("passes the whole suite in test/conformance (files and a directory)", async () => {
    const byFile = await runArl(["conformance", ...suiteFiles.map((f) => path.join("test", "conformance", f))], {
      cwd: repo,
    });
    expect(byFile.stderr).toBe("");
    expect(byFile.stdout).toBe(`${suiteCases} passed, 0 failed\n`);
    expect(byFile.code).toBe(0);
    const byDir = await runArl(["conformance", "test/conformance"], { cwd: repo });
    expect(byDir.stdout).toBe(`${suiteCases} passed, 0 failed\n`);
    expect(byDir.code).toBe(0);
  });

  it("prints a line per failing case (name, op, expected vs actual, max abs error) and exits 1", async () => {
    const cwd = workspace({
      "wrong.json": {
        cases: [
          passAt3,
          // The plug-in estimate, which is wrong: pass@k must not match it.
          { name: "plug-in pass@3", op: "pass_at_k", input: { n: 10, c: 2, k: 3 }, expected: 0.488 },
        ],
      },
    });
    const run = await runArl(["conformance", "wrong.json"], { cwd });
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^wrong\.json: case 'plug-in pass@3' \(pass_at_k\): expected 0\.488, got 0\.5333333333333\d*; max abs error 4\.533e-2 \(tol 0\.000001\)$/,
    );
    expect(lines[1]).toBe("1 passed, 1 failed");
  });

  it("reports shape mismatches", async () => {
    const cwd = workspace({
      "shape.json": {
        cases: [
          { name: "short", op: "kl", input: { logp: [-1, -2], logp_ref: [-1, -2], estimator: "k1" }, expected: [0] },
        ],
      },
    });
    const run = await runArl(["conformance", "shape.json"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      "shape.json: case 'short' (kl): expected [0], got [0,0]; shape mismatch: expected 1 entries, got 2\n0 passed, 1 failed\n",
    );
  });

  it("exits 2 with a located message for a malformed file, and still runs the good ones", async () => {
    const cwd = workspace({
      "good.json": { cases: [passAt3] },
      "bad.json": {
        cases: [
          passAt3,
          {
            name: "gae without bootstrap",
            op: "gae",
            input: { rewards: [1], values: [0], gamma: 1, lambda: 1, end: "truncated" },
            expected: [1],
          },
        ],
      },
    });
    const run = await runArl(["conformance", "good.json", "bad.json"], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "arl conformance: bad.json: case 1 'gae without bootstrap' (gae): input.bootstrap_value: a truncated episode needs bootstrap_value (V(h_T))\n",
    );
    expect(run.stdout).toBe("1 passed, 0 failed\n");
  });

  it("exits 2 for invalid JSON (with line:column), unreadable files and no files", async () => {
    const cwd = workspace({ "broken.json": '{"cases": [\n  {"name": 1,,}\n]}' });
    const broken = await runArl(["conformance", "broken.json"], { cwd });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^arl conformance: broken\.json:2:\d+: invalid JSON: /);
    expect(broken.stderr).not.toMatch(/\n\s+at /); // never a stack trace
    const missing = await runArl(["conformance", "nope.json"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read 'nope.json'");
    const none = await runArl(["conformance"], { cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("give at least one vector file");
  });

  it("--trainer local evaluates the vectors through the embedded trainer process; a bad trainer name is a usage error", async () => {
    const cwd = workspace({ "v.json": { cases: [passAt3] } });
    const run = await runArl(["conformance", "v.json", "--trainer", "local"], { cwd });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("1 passed, 0 failed");
    const bad = await runArl(["conformance", "v.json", "--trainer", "jax"], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--trainer must be one of local, torch, not 'jax'");
  });
});
