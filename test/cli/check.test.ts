import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { counterSpec } from "../helpers/plans.js";

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-check-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe("arl check", () => {
  it("prints the exact JSON shape with 1-based, end-exclusive ranges and the hint, and exits 1 on errors", async () => {
    const cwd = workspace({ "x.arl": "experiment e {\n  a: 1\n  b: )\n}\n" });
    const run = await runArl(["check", "x.arl", "--format", "json"], { cwd });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      diagnostics: [
        {
          file: "x.arl",
          code: "syntax-error",
          severity: "error",
          message: "expected a value (number, string, true, false, none, a name, a list, a record or '('), found ')'",
          range: { start: { line: 3, column: 6 }, end: { line: 3, column: 7 } },
          hint: "each field needs a value after ':'",
        },
      ],
      summary: { errors: 1, warnings: 0, infos: 0 },
    });
  });

  it("adds the hint and the related locations to a JSON diagnostic that has them", async () => {
    const cwd = workspace({
      "x.arl": 'env x { kind: subprocess, command: ["a"] }\nenv x { kind: subprocess, command: ["b"] }\n',
    });
    const run = await runArl(["check", "x.arl", "--format", "json"], { cwd });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).diagnostics).toEqual([
      {
        file: "x.arl",
        code: "duplicate-declaration",
        severity: "error",
        message: "'x' is declared twice in this file",
        range: { start: { line: 2, column: 5 }, end: { line: 2, column: 6 } },
        hint: "rename one of them",
        related: [
          {
            file: "x.arl",
            range: { start: { line: 1, column: 5 }, end: { line: 1, column: 6 } },
            message: "first declared here",
          },
        ],
      },
    ]);
  });

  it("carries a lint rule's hint (the fix) into JSON", async () => {
    const cwd = fileURLToPath(new URL("../fixtures/lint/group-size-one/", import.meta.url));
    const run = await runArl(["check", "triggers.arl", "--format", "json"], { cwd });
    const found = JSON.parse(run.stdout).diagnostics.filter((d: { code: string }) => d.code === "group-size-one");
    expect(found).toHaveLength(1);
    expect(found[0].hint).toBe(
      "sample several trajectories per task (group_size: 4 or 8), or use a critic (`algorithm extends algo.ppo`)",
    );
  });

  it("reports every independent syntax error of a file in one run", async () => {
    const cwd = workspace({ "x.arl": "experiment a { x: ) }\nexperiment b { y: 1 ] }\nexperiment c { z: @ }\n" });
    const run = await runArl(["check", "--format", "json", "x.arl"], { cwd });
    const lines = JSON.parse(run.stdout).diagnostics.map(
      (d: { range: { start: { line: number } } }) => d.range.start.line,
    );
    expect(lines).toEqual([1, 2, 3]);
  });

  it("prints file:line:col: severity[code]: message with a code frame and carets, without colour off a TTY", async () => {
    const cwd = workspace({ "x.arl": "experiment e {\n  b: 1_\n}\n" });
    const run = await runArl(["check", "x.arl"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      [
        'x.arl:2:6: error[invalid-token]: malformed number "1_"',
        "  |",
        "2 |   b: 1_",
        "  |      ^^",
        "  = hint: numbers look like 8, 1_000, 0.2 or 5e-7 (underscores only between digits)",
        "",
        "1 error, 0 warnings, 0 infos in 1 file",
        "",
      ].join("\n"),
    );
  });

  it("prints a diagnostic on a literal megabytes long with its message elided and its line windowed at the range", async () => {
    const big = "x".repeat(2_000_000);
    // The literal starts 1,000 columns into its line: the frame shows a window that starts shortly before it.
    const cwd = workspace({
      "x.arl": counterSpec(`constraints { c: block(${" ".repeat(1000)}call.tool == "${big}") }`),
    });
    const run = await runArl(["check", "x.arl"], { cwd });
    expect(run.code).toBe(1);
    const lines = run.stdout.split("\n");
    expect(Math.max(...lines.map((l) => l.length)), "the longest printed line").toBeLessThan(1100);
    // After the counter env's note (env-behaviour-unchecked, at line 4).
    const at = lines.findIndex((l) => l.includes("error[unknown-tool]"));
    expect(lines[at]).toMatch(
      /^x\.arl:18:\d+: error\[unknown-tool\]: the experiment has no tool 'x+\.\.\.\(1999\d+ characters elided\)\.\.\.x+'$/,
    );
    const [source, carets] = [lines[at + 2]!, lines[at + 3]!];
    expect(source).toMatch(/^18 \| \.\.\. +call\.tool == "x+\.\.\.$/);
    expect(carets).toMatch(/^ +\| +\^+$/);
    expect(source[carets.indexOf("^")], "the carets start under the literal's quote").toBe('"');
    const json = await runArl(["check", "x.arl", "--format", "json"], { cwd });
    expect(json.stdout.length).toBeLessThan(2000);
  });

  it("colours on a TTY unless NO_COLOR is set", async () => {
    const cwd = workspace({ "x.arl": "experiment e { b: 1_ }\n" });
    const tty = await runArl(["check", "x.arl"], { cwd, isTTY: true });
    expect(tty.stdout).toContain("\x1b[");
    const noColor = await runArl(["check", "x.arl"], { cwd, isTTY: true, env: { NO_COLOR: "1" } });
    expect(noColor.stdout).not.toContain("\x1b[");
  });

  it("checks directories recursively and exits 0 when there are no errors (a subprocess env's note pointing at env-check is info)", async () => {
    // An experiment needs a success criterion (eval.success, or an env's success signal).
    const valid =
      'experiment e {\n  policy { model: "builtin:tiny" }\n  env x { kind: subprocess, command: ["env-server"], signals { success { scope: outcome, type: bool } } }\n}\n';
    const cwd = workspace({
      "a/one.arl": valid,
      "a/b/two.arl": 'env x { kind: subprocess, command: ["env-server"] }\n',
      "a/node_modules/skip.arl": "broken {",
    });
    const run = await runArl(["check", "a", "--format", "json"], { cwd });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { diagnostics: { file: string; code: string; severity: string }[] };
    expect(result).toMatchObject({ summary: { errors: 0, warnings: 0, infos: 1 } });
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ file: "a/one.arl", code: "env-behaviour-unchecked", severity: "info" }),
    ]);
    expect(JSON.stringify(result.diagnostics)).toContain("arl env-check");
  });

  it("exits 2 for unreadable files and for bad options", async () => {
    const cwd = workspace({ "x.arl": "experiment e {}\n" });
    const missing = await runArl(["check", "nope.arl"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read 'nope.arl'");
    const badFormat = await runArl(["check", "--format", "xml", "x.arl"], { cwd });
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain("--format must be 'text' or 'json'");
    const unknownFlag = await runArl(["check", "--frobnicate"], { cwd });
    expect(unknownFlag.code).toBe(2);
  });

  it("reports an imported file's diagnostics once even when several entries import it", async () => {
    const cwd = workspace({ "a.arl": 'import "./lib"\n', "b.arl": 'import "./lib"\n', "lib.arl": "env x { a: ) }\n" });
    const run = await runArl(["check", ".", "--format", "json"], { cwd });
    const report = JSON.parse(run.stdout);
    expect(report.diagnostics.map((d: { file: string }) => d.file)).toEqual(["lib.arl"]);
  });
});

describe("arl", () => {
  it("prints its version and exits 2 on an unknown command", async () => {
    const cwd = tmpdir();
    const version = await runArl(["--version"], { cwd });
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const unknown = await runArl(["frobnicate"], { cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });
});
