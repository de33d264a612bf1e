import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { examplesDir, validatePlan, workspace } from "../plan/support.js";

function withExample(name: string): string {
  const dir = workspace({}, "arl-cli-plan-");
  copyFileSync(path.join(examplesDir, name), path.join(dir, name));
  return dir;
}

function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe("arl plan", () => {
  it("writes one pretty-printed plan per variant under plans/ beside the spec, each valid against the published schema", async () => {
    const cases: [string, string[]][] = [
      [
        "tw-max-steps.arl",
        ["max_turns=12", "max_turns=16", "max_turns=6", "max_turns=8"].map((v) => `tw_max_steps/${v}.plan.json`),
      ],
      [
        "agentrl-ablation.arl",
        ["full", "no_cross_policy", "no_task_norm"].map((v) => `agentrl_multitask/${v}.plan.json`),
      ],
      [
        "findmax.arl",
        [
          "findmax_grpo/default",
          "findmax_loo/default",
          "findmax_reductions/dr_grpo",
          "findmax_reductions/seq_mean",
          "findmax_reductions/token_mean",
        ].map((v) => `${v}.plan.json`),
      ],
    ];
    for (const [example, expected] of cases) {
      const cwd = withExample(example);
      const run = await runArl(["plan", example], { cwd });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(filesBelow(path.join(cwd, "plans"))).toEqual(expected);
      for (const file of expected) {
        const text = readFileSync(path.join(cwd, "plans", file), "utf8");
        expect(text.startsWith('{\n  "format_version": 1,\n  "hash": "sha256:')).toBe(true);
        expect(text.endsWith("}\n")).toBe(true);
        const plan = JSON.parse(text) as { hash: string };
        expect(validatePlan(plan), file).toEqual([]);
        expect(run.stdout).toContain(`wrote ${path.join("plans", file)}  ${plan.hash}\n`);
      }
    }
  });

  it("--out DIR is relative to the working directory; running twice gives the same bytes and leaves no temp files", async () => {
    const cwd = withExample("findmax.arl");
    expect((await runArl(["plan", "findmax.arl", "--out", "out/p"], { cwd })).code).toBe(0);
    const first = filesBelow(path.join(cwd, "out/p")).map((f) => readFileSync(path.join(cwd, "out/p", f), "utf8"));
    expect((await runArl(["plan", "findmax.arl", "--out", "out/p"], { cwd })).code).toBe(0);
    expect(filesBelow(path.join(cwd, "out/p")).length).toBe(5);
    expect(filesBelow(path.join(cwd, "out/p")).map((f) => readFileSync(path.join(cwd, "out/p", f), "utf8"))).toEqual(
      first,
    );
    expect(existsSync(path.join(cwd, "plans"))).toBe(false);
  });

  it("--json prints [{experiment, variant, hash, plan}] to stdout, diagnostics to stderr, and writes nothing", async () => {
    const cwd = withExample("agentrl-ablation.arl");
    const run = await runArl(["plan", "agentrl-ablation.arl", "--json"], { cwd });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as {
      experiment: string;
      variant: string;
      hash: string;
      plan: { hash: string };
    }[];
    expect(out.map((p) => [p.experiment, p.variant])).toEqual([
      ["agentrl_multitask", "full"],
      ["agentrl_multitask", "no_cross_policy"],
      ["agentrl_multitask", "no_task_norm"],
    ]);
    for (const p of out) {
      expect(Object.keys(p)).toEqual(["experiment", "variant", "hash", "plan"]);
      expect(p.hash).toBe(p.plan.hash);
      expect(validatePlan(p.plan)).toEqual([]);
    }
    expect(run.stderr).toContain("warning[");
    expect(filesBelow(cwd)).toEqual(["agentrl-ablation.arl"]);
  });

  it("writes no plan when the spec has errors, and prints them as arl check does", async () => {
    const cwd = workspace({
      "bad.arl": 'experiment e {\n  policy { model: "builtin:tiny" }\n  env x { kind: rooms, rooms: 0 }\n}\n',
    });
    const run = await runArl(["plan", "bad.arl"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^bad\.arl:3:31: error\[invalid-value\]/);
    expect(run.stdout).toContain("1 error, 0 warnings, 0 infos in 1 file");
    expect(run.stderr).toContain("nothing written");
    expect(filesBelow(cwd)).toEqual(["bad.arl"]);
    const json = await runArl(["plan", "bad.arl", "--json"], { cwd });
    expect(json.code).toBe(1);
    expect(json.stdout).toBe("");
    expect(json.stderr).toContain("error[invalid-value]");
  });

  it("writes no plan when a data file is missing (data-file-not-found at the field)", async () => {
    const cwd = workspace({
      "s.arl":
        'import "std/envs/sql" as sql\nexperiment e {\n  policy { model: "builtin:tiny" }\n  env bank extends sql.bank_demo { database: "./nope.sqlite" }\n}\n',
    });
    const run = await runArl(["plan", "s.arl"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("s.arl:4:46: error[data-file-not-found]");
    expect(filesBelow(cwd)).toEqual(["s.arl"]);
  });

  it("percent-encodes variant names that are not safe file names", async () => {
    const cwd = workspace({
      "m.arl":
        'import "std/envs/rooms" as rooms\nexperiment e {\n  policy { model: "builtin:tiny" }\n  env w extends rooms.world {}\n  resources { backend: torch }\n  sweep { policy.model: ["hf:org/a", "builtin:tiny"] }\n}\n',
    });
    const run = await runArl(["plan", "m.arl"], { cwd });
    expect(run.code, run.stdout).toBe(0);
    expect(filesBelow(path.join(cwd, "plans"))).toEqual([
      "e/model=builtin%3Atiny.plan.json",
      "e/model=hf%3Aorg%2Fa.plan.json",
    ]);
    expect(JSON.parse(readFileSync(path.join(cwd, "plans/e/model=hf%3Aorg%2Fa.plan.json"), "utf8")).variant).toBe(
      "model=hf:org/a",
    );
  });

  it("exits 2 on usage errors and unreadable files", async () => {
    const cwd = withExample("findmax.arl");
    expect((await runArl(["plan"], { cwd })).code).toBe(2);
    expect((await runArl(["plan", "findmax.arl", "findmax.arl"], { cwd })).code).toBe(2);
    expect((await runArl(["plan", "findmax.arl", "--bogus"], { cwd })).code).toBe(2);
    const missing = await runArl(["plan", "nope.arl"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read 'nope.arl'");
    const help = await runArl(["plan", "--help"], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("defaults to 'plans' in FILE's directory");
  });
});
