// `arl export verl` driven in-process through runCli on AgentRL's Table 6 recipe over HTTP task
// servers (test/fixtures/export/http-multitask.arl: its rows need no env reset), in a temporary
// directory.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";

const dir = mkdtempSync(path.join(tmpdir(), "arl-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SPEC = `${path.resolve("test/fixtures/export/http-multitask.arl")}#agentrl_table6/full`;

async function exportVerl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIO = {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    cwd: dir,
    env: {},
    isTTY: false,
  };
  const code = await runCli(["export", ...args], io);
  return { code, stdout, stderr };
}

describe("arl export verl", () => {
  it("refuses settings veRL has no safe mapping for, listing them, and writes nothing", async () => {
    const r = await exportVerl("verl", SPEC, "--out", "refused");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("algorithm.advantage.task_norm = true");
    expect(r.stderr).toContain("rollout.async");
    expect(r.stderr).toContain("--allow-approximate");
    expect(() => statSync(path.join(dir, "refused"))).toThrow();
  });

  it("writes the config, report, rows, reward, tools and run.sh with --allow-approximate", async () => {
    const r = await exportVerl("verl", SPEC, "--out", "full", "--allow-approximate");
    expect(r.code).toBe(0);
    const read = (name: string) => readFileSync(path.join(dir, "full", name), "utf8");
    expect(read("arl_ppo.yaml")).toContain("  - ppo_trainer\n  - _self_\n");
    expect(read("SEMANTICS.md")).toContain("Bessel");
    const rows = read("data/train.jsonl")
      .trim()
      .split("\n")
      .map(
        (line) => JSON.parse(line) as { data_source: string; prompt: unknown; extra_info: { reset: { url: string } } },
      );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]?.prompt).toBeNull();
    expect(rows[0]?.extra_info.reset.url).toMatch(/^http:/);
    expect(read("tool_config.yaml")).toContain("arl_env_tool.ArlHttpEnvTool");
    expect(statSync(path.join(dir, "full", "run.sh")).mode & 0o111).not.toBe(0);
  });

  it("refuses a non-empty folder without --force, an unknown target and a spec with several variants", async () => {
    mkdirSync(path.join(dir, "busy"));
    writeFileSync(path.join(dir, "busy", "x"), "");
    expect((await exportVerl("verl", SPEC, "--out", "busy", "--allow-approximate")).stderr).toContain(
      "is not empty; pass --force",
    );
    expect((await exportVerl("verl", SPEC, "--out", "busy", "--allow-approximate", "--force")).code).toBe(0);
    expect((await exportVerl("openrlhf", SPEC, "--out", "x")).code).toBe(2);
    const many = await exportVerl("verl", path.resolve("experiments/agentrl-table6-ablation.arl"), "--out", "many");
    expect(many.code).toBe(2);
    expect(many.stderr).toContain("variants; name one");
  });
});
