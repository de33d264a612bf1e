// A spec that declares nothing is said to be so: 'arl check' warns, and the commands that run
// plans refuse it rather than finish having done nothing.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-empty-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

describe("a spec that declares nothing", () => {
  it("is a warning of 'arl check', for an empty file and a file of comments alike", async () => {
    const cwd = workspace({ "empty.arl": "", "comments.arl": "// a spec to be written\n/* later */\n" });
    for (const file of ["empty.arl", "comments.arl"]) {
      const run = await runArl(["check", file, "--format", "json"], { cwd });
      expect(run.code, file).toBe(0);
      const out = JSON.parse(run.stdout) as { diagnostics: { code: string; severity: string; range: unknown }[] };
      expect(
        out.diagnostics.map((d) => [d.code, d.severity]),
        file,
      ).toEqual([["empty-file", "warning"]]);
      expect(out.diagnostics[0]?.range).toEqual({ start: { line: 1, column: 1 }, end: { line: 1, column: 1 } });
    }
  });

  it("is not reported for a file that declares something without an experiment", async () => {
    const cwd = workspace({ "lib.arl": "env e { kind: rooms }\n" });
    const run = await runArl(["check", "lib.arl", "--format", "json"], { cwd });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ diagnostics: [], summary: { errors: 0, warnings: 0, infos: 0 } });
  });

  it("is refused by 'arl run' (exit 2, nothing written), for an empty file and for one without an experiment", async () => {
    const cwd = workspace({ "empty.arl": "", "lib.arl": "env e { kind: rooms }\n" });
    for (const file of ["empty.arl", "lib.arl"]) {
      const run = await runArl(["run", file, "--out", "runs"], { cwd });
      expect(run.code, file).toBe(2);
      expect(run.stderr).toContain(`'${file}' declares no experiment: nothing to run`);
    }
    expect(readdirSync(cwd).sort()).toEqual(["empty.arl", "lib.arl"]);
  });
});
